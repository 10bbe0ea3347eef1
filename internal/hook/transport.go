package hook

import (
	"bytes"
	"io"
	"net/http"
)

// HandlerTransport is an http.RoundTripper that serves each request with
// Handler in the process, as the network would bring it there: the
// in-process Madebook of POST /hooks/claude-code, so the http hook makes
// the same calls as the command hook, through the same routes and rules.
type HandlerTransport struct {
	Handler http.Handler
	// RemoteAddr is the client address the requests carry (the http
	// hook's caller).
	RemoteAddr string
}

// RoundTrip serves req and returns its answer.
func (t HandlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	in := req.Clone(req.Context())
	in.RemoteAddr = t.RemoteAddr
	in.RequestURI = req.URL.RequestURI()
	w := &recorder{header: http.Header{}}
	t.Handler.ServeHTTP(w, in)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return &http.Response{Status: http.StatusText(w.status), StatusCode: w.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(bytes.NewReader(w.body.Bytes())), ContentLength: int64(w.body.Len()), Request: req}, nil
}

// recorder is the http.ResponseWriter HandlerTransport serves into.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}
