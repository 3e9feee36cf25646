package index

import (
	"context"
	"errors"
	"fmt"
)

// Ensure opens the current index of dataDir, first building one from the
// resolved reference sources when there is none. It returns the index and
// a sentence saying where its data came from.
func Ensure(ctx context.Context, dataDir string, ro ResolveOptions, bo BuildOptions) (*Index, string, error) {
	ix, err := Open(dataDir)
	if err == nil {
		return ix, "index " + ix.Dir + " built " + ix.Meta.BuiltAt, nil
	}
	if !errors.Is(err, ErrNoIndex) {
		return nil, "", err
	}
	src, from, err := ResolveSources(ctx, ro)
	if err != nil {
		return nil, "", fmt.Errorf("no index in %s and no reference data to build one: %w", dataDir, err)
	}
	if src.Streets, err = LoadStreetSources(dataDir); err != nil {
		return nil, "", err
	}
	if bo.Log != nil {
		bo.Log.Info("building the reference index on first use", "from", from, "data_dir", dataDir)
	}
	if _, err := Build(ctx, src, dataDir, bo); err != nil {
		return nil, "", err
	}
	ix, err = Open(dataDir)
	if err != nil {
		return nil, "", err
	}
	return ix, "index built now from " + from, nil
}
