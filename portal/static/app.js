// lodge portal: progressive enhancement only. Every page works without
// this file; with it, the address correction box shows the address
// check's verdict and suggestion as the customer types.
"use strict";
(function () {
  function suggestBox(box) {
    var out = document.getElementById(box.getAttribute("data-suggest"));
    if (!out) return;
    var timer = 0, inflight = null, last = "";
    function show(res) {
      out.textContent = "";
      if (res.error) {
        out.appendChild(document.createTextNode(res.error));
        return;
      }
      var p = document.createElement("p");
      p.appendChild(document.createTextNode("The address check says "));
      var v = document.createElement("span");
      v.className = "v v-" + String(res.status || "").toLowerCase();
      v.textContent = res.status || "";
      p.appendChild(v);
      if (res.message) p.appendChild(document.createTextNode(": " + res.message));
      out.appendChild(p);
      if (res.suggestion && res.suggestion.length) {
        var q = document.createElement("p");
        q.appendChild(document.createTextNode("Suggested: "));
        var a = document.createElement("span");
        a.className = "addr";
        a.textContent = res.suggestion.join(", ");
        q.appendChild(a);
        q.appendChild(document.createTextNode(" "));
        var use = document.createElement("button");
        use.type = "button";
        use.className = "secondary";
        use.textContent = "Use this address";
        use.addEventListener("click", function () {
          box.value = res.suggestion.join("\n");
          box.focus();
          check();
        });
        q.appendChild(use);
        out.appendChild(q);
      }
    }
    function check() {
      var text = box.value;
      if (text === last) return;
      last = text;
      if (inflight) inflight.abort();
      if (!text.trim()) {
        out.textContent = "";
        return;
      }
      inflight = new AbortController();
      fetch("/portal/suggest?address=" + encodeURIComponent(text), {
        credentials: "same-origin",
        headers: { Accept: "application/json" },
        signal: inflight.signal
      }).then(function (r) {
        return r.json();
      }).then(show, function (e) {
        if (e && e.name === "AbortError") return;
        out.textContent = "The address check cannot be reached just now; the address is checked when you send the form.";
      });
    }
    box.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(check, 250);
    });
  }
  var boxes = document.querySelectorAll("textarea[data-suggest]");
  for (var i = 0; i < boxes.length; i++) suggestBox(boxes[i]);
})();
