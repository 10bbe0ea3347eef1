// Package static holds the console's assets — the pinned htmx and its
// server-sent events extension (htmx-ext-sse 2.2.4), the stylesheet, a
// small script and the icon — embedded in the binary and addressed by
// content hash, so a browser may cache them forever.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
)

//go:embed htmx.min.js htmx-ext-sse.min.js madebook.css madebook.js favicon.svg
var files embed.FS

// FS is the embedded assets.
var FS fs.FS = files

var hashes = func() map[string]string {
	m := map[string]string{}
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		b, err := fs.ReadFile(files, e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(b)
		m[e.Name()] = hex.EncodeToString(sum[:6])
	}
	return m
}()

// URL returns the cache-busting address of an asset, e.g.
// "/static/htmx.min.js?v=3f2a…". It panics for an asset that does not
// exist, which a test of every page catches.
func URL(name string) string {
	h, ok := hashes[name]
	if !ok {
		panic("static: no asset " + name)
	}
	return "/static/" + name + "?v=" + h
}

// Has reports whether name is one of the assets (a file: the folder
// that holds them is not one).
func Has(name string) bool {
	_, ok := hashes[name]
	return ok
}

// Current reports whether v is the current hash of the asset.
func Current(name, v string) bool {
	h, ok := hashes[name]
	return ok && h == v
}

// Icon is the console's icon (an SVG), also served at /favicon.ico, where
// browsers look for one.
func Icon() []byte {
	b, err := fs.ReadFile(files, "favicon.svg")
	if err != nil {
		panic(err)
	}
	return b
}
