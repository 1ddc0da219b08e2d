package main

import (
	"os"
	"path/filepath"
)

// recorded reads what the extension itself kept with `--record-requests-dir`: the last request
// body each handler received, byte for byte as CAPI's runtime client sent it. Nothing stands
// between the manager and the extension; the files are written whole (renamed into place).
type recorded struct{ dir string }

// lastRequest is the body of the last call to a handler, e.g. ("GeneratePatches", "patches"),
// or nil when there was none.
func (r recorded) lastRequest(hook, handler string) []byte {
	data, err := os.ReadFile(filepath.Join(r.dir, hook+"-"+handler+".json"))
	if err != nil {
		return nil
	}
	return data
}
