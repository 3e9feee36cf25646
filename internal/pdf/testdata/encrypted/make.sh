#!/bin/sh
# Writes the encrypted test PDFs from plain.pdf (3 A4 pages) with qpdf
# (Debian package qpdf): o*.pdf have an owner password only (the user
# password is empty: anyone can open them) and their page tree in object
# streams, which must be decrypted to count the pages; u*.pdf need the
# user password "user" and keep their page tree in plain objects, which a
# reader that ignores encryption would count. One of each for every
# standard security handler revision: 40 (R2, RC4), 128rc4 (R3, RC4),
# 128aes (R4, AES-128), 256r5 (R5, AES-256), 256 (R6, AES-256).
set -eu
cd "$(dirname "$0")"
for bits in 40 128rc4 128aes 256r5 256; do
  case $bits in
    40) args="40" ;;
    128rc4) args="128" ;;
    128aes) args="128 --use-aes=y" ;;
    256r5) args="256 --force-R5" ;;
    256) args="256" ;;
  esac
  # shellcheck disable=SC2086
  qpdf --allow-weak-crypto --object-streams=generate --encrypt "" owner $args -- plain.pdf "o$bits.pdf"
  # shellcheck disable=SC2086
  qpdf --allow-weak-crypto --object-streams=disable --encrypt user owner $args -- plain.pdf "u$bits.pdf"
done
