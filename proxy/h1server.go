package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/rawconn"
)

// Serve serves the proxy on ln over HTTP/1.1 with a server of its own,
// until ctx is done (then it closes ln and every connection and returns
// nil) or ln fails.
//
// net/http's server starts a goroutine per request to watch the client's
// connection while the handler runs, and wakes and joins it afterwards; on
// a small, busy machine that hand-off is a large part of what the proxy
// adds to a short exchange. Here a request's connection is watched only
// when the handler is about to wait for something that only the client's
// departure ends (a stream, a withheld reply, a delay): a short exchange
// costs no goroutine and no timer. Requests are parsed by net/http
// ([http.ReadRequest]); responses use Content-Length when the handler
// declares it or finishes within the first 4 KiB, chunked encoding
// otherwise. The proxy stays an [http.Handler] too, for any other server.
func (h *HTTP) Serve(ctx context.Context, ln net.Listener) error {
	return (&h1Server{handler: h, onError: h.onError}).serve(ctx, ln)
}

// h1Server is Serve's HTTP/1.1 server, for any handler.
type h1Server struct {
	handler http.Handler
	onError func(error)
}

func (h *h1Server) serve(ctx context.Context, ln net.Listener) error {
	var mu sync.Mutex
	conns := map[net.Conn]struct{}{}
	stop := context.AfterFunc(ctx, func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("proxy: accept: %w", err)
			}
			// Out of file descriptors, an aborted handshake …: wait and
			// accept again, as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		backoff = 0
		mu.Lock()
		if ctx.Err() != nil {
			mu.Unlock()
			c.Close()
			return nil
		}
		conns[c] = struct{}{}
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.serveConn(ctx, c)
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
		}()
	}
}

const (
	// h1IdleWait bounds the wait for a request's headers on a connection.
	h1IdleWait = 2 * time.Minute
	// h1MaxHead bounds a request's line and headers (net/http's default
	// MaxHeaderBytes and its slack).
	h1MaxHead = 1<<20 + 4096
	// h1BufferBody is how much of a body without a declared length is
	// held back to send it with one (a short error page).
	h1BufferBody = 4 << 10
	// h1DrainMax is how much of an unread request body is skipped to keep
	// the connection; beyond it the connection is closed.
	h1DrainMax = 256 << 10
)

// h1ConnReader reads the connection, first giving back a byte the watcher
// read ahead (the start of a pipelined request). While a request's head is
// read, at most limit bytes come through (then errHeadTooLarge), so a
// client cannot make the server buffer an endless header.
type h1ConnReader struct {
	c     net.Conn
	ahead []byte
	limit int64 // < 0: none
}

// errHeadTooLarge ends a request head longer than h1MaxHead.
var errHeadTooLarge = errors.New("proxy: request head too large")

func (r *h1ConnReader) Read(p []byte) (int, error) {
	if r.limit == 0 {
		return 0, errHeadTooLarge
	}
	if r.limit > 0 && int64(len(p)) > r.limit {
		p = p[:r.limit]
	}
	var n int
	var err error
	if len(r.ahead) > 0 {
		n = copy(p, r.ahead)
		r.ahead = r.ahead[n:]
	} else {
		n, err = r.c.Read(p)
	}
	if r.limit > 0 {
		r.limit -= int64(n)
	}
	return n, err
}

// serveConn serves one connection's requests in order.
func (h *h1Server) serveConn(ctx context.Context, c net.Conn) {
	defer c.Close()
	c = rawconn.Wrap(c)
	cr := &h1ConnReader{c: c, limit: -1}
	br := bufio.NewReaderSize(cr, 16<<10)
	bw := bufio.NewWriterSize(c, 16<<10)
	for {
		_ = c.SetReadDeadline(time.Now().Add(h1IdleWait))
		cr.limit = h1MaxHead - int64(br.Buffered())
		req, err := http.ReadRequest(br)
		tooLarge := cr.limit == 0
		cr.limit = -1
		if err != nil {
			var ne net.Error
			if tooLarge {
				refuse(c, http.StatusRequestHeaderFieldsTooLarge, "mcpdrill: request head too large")
			} else if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !(errors.As(err, &ne) && ne.Timeout()) {
				refuse(c, http.StatusBadRequest, "mcpdrill: malformed HTTP request")
			}
			return
		}
		_ = c.SetReadDeadline(time.Time{})
		if !h.serveRequest(ctx, c, cr, br, bw, req) {
			return
		}
	}
}

// refuse answers a request the server does not hand to the handler, and the
// connection closes after it.
func refuse(c net.Conn, status int, msg string) {
	head := "HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\nConnection: close\r\n"
	if msg != "" {
		head += "Content-Type: text/plain; charset=utf-8\r\n"
	}
	_, _ = io.WriteString(c, head+"Content-Length: "+strconv.Itoa(len(msg))+"\r\n\r\n"+msg)
}

// serveRequest runs the handler for one request and finishes its
// response. It reports whether the connection can carry another request.
func (h *h1Server) serveRequest(ctx context.Context, c net.Conn, cr *h1ConnReader, br *bufio.Reader, bw *bufio.Writer, req *http.Request) bool {
	req.RemoteAddr = c.RemoteAddr().String()
	if req.ProtoMajor != 1 {
		refuse(c, http.StatusHTTPVersionNotSupported, "")
		return false
	}
	if e := req.Header.Get("Expect"); e != "" {
		if !strings.EqualFold(e, "100-continue") {
			refuse(c, http.StatusExpectationFailed, "")
			return false
		}
		if req.ContentLength != 0 {
			_, _ = bw.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
			if bw.Flush() != nil {
				return false
			}
		}
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body := &reqBody{rc: req.Body}
	if req.Body == http.NoBody {
		body.done.Store(true) // nothing of the connection's is the handler's
	}
	req.Body = body
	req = req.WithContext(rctx)
	w := &h1Writer{bw: bw, req: req, header: http.Header{}, clen: -1}
	w.closeAfter = req.Close || req.ProtoMajor == 1 && req.ProtoMinor == 0 && !strings.EqualFold(req.Header.Get("Connection"), "keep-alive")

	w.watch = &clientWatch{c: c, cr: cr, br: br, body: body, cancel: cancel}
	ok := h.runHandler(w, req)
	w.watch.stop()
	if !ok || rctx.Err() != nil {
		return false // the handler gave up on the response, or the client or the server went away
	}
	if err := w.finish(); err != nil {
		return false
	}
	if w.closeAfter {
		return false
	}
	if !body.done.Load() {
		n, _ := io.CopyN(io.Discard, body, h1DrainMax+1)
		if n > h1DrainMax || !body.done.Load() {
			return false
		}
	}
	return true
}

// clientWatch reads the client's connection while a handler waits, so the
// request's context ends when the client leaves. It starts only when the
// handler asks (watchClient, before a wait only the client's departure
// ends) and once the request body has been read: until then the
// connection's bytes are the handler's.
type clientWatch struct {
	c      net.Conn
	cr     *h1ConnReader
	br     *bufio.Reader
	body   *reqBody
	cancel context.CancelFunc

	mu    sync.Mutex
	state int // 0: not started, 1: reading, 2: stopped
	done  chan struct{}
}

// start starts the watch if it can; it is called in the handler's
// goroutine, which alone reads br.
func (cw *clientWatch) start() {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if cw.state != 0 || !cw.body.done.Load() || cw.br.Buffered() > 0 {
		return
	}
	cw.state, cw.done = 1, make(chan struct{})
	go func() {
		defer close(cw.done)
		var b [1]byte
		n, err := cw.c.Read(b[:])
		if n == 1 {
			cw.cr.ahead = append(cw.cr.ahead[:0], b[0]) // a pipelined request
			return
		}
		cw.mu.Lock()
		stopped := cw.state == 2
		cw.mu.Unlock()
		if err != nil && !stopped {
			cw.cancel() // the client has gone
		}
	}()
}

// stop ends the watch's read, if one is running, and waits for it.
func (cw *clientWatch) stop() {
	cw.mu.Lock()
	reading := cw.state == 1
	cw.state = 2
	cw.mu.Unlock()
	if reading {
		_ = cw.c.SetReadDeadline(time.Unix(1, 0))
		<-cw.done
		_ = cw.c.SetReadDeadline(time.Time{})
	}
}

// runHandler runs the handler; it reports false when the handler
// panicked (the response is then cut where it stands and the connection
// closed, as net/http does).
func (h *h1Server) runHandler(w *h1Writer, req *http.Request) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			ok = false
			_ = w.bw.Flush() // what the handler wrote goes out, then the connection closes
			if p != http.ErrAbortHandler && h.onError != nil {
				h.onError(fmt.Errorf("proxy: handler panic serving %s %s: %v", req.Method, req.URL.Path, p))
			}
		}
	}()
	h.handler.ServeHTTP(w, req)
	return true
}

// reqBody is a request body that records when it has been read to its end.
type reqBody struct {
	rc   io.ReadCloser
	done atomic.Bool
}

func (b *reqBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		b.done.Store(true)
	}
	return n, err
}

func (b *reqBody) Close() error { return b.rc.Close() }

// h1Writer is the http.ResponseWriter of Serve.
type h1Writer struct {
	watch  *clientWatch
	bw     *bufio.Writer
	req    *http.Request
	header http.Header
	sent   http.Header // the headers as of WriteHeader

	status     int
	wroteHdr   bool // WriteHeader happened (the status is fixed)
	committed  bool // the status line and headers are in bw
	chunked    bool
	noBody     bool  // HEAD, 1xx, 204, 304
	clen       int64 // the declared Content-Length, or -1
	written    int64
	pending    []byte // body held back before commit
	closeAfter bool
	err        error
}

func (w *h1Writer) Header() http.Header { return w.header }

// watchClient makes the request's context end when the client leaves
// (see [watchClient]).
func (w *h1Writer) watchClient() { w.watch.start() }

func (w *h1Writer) WriteHeader(code int) {
	if w.wroteHdr || code < 200 {
		return
	}
	w.wroteHdr, w.status = true, code
	w.noBody = w.req.Method == http.MethodHead || code == http.StatusNoContent || code == http.StatusNotModified
	w.sent = w.header
	if cl := w.header.Get("Content-Length"); cl != "" {
		if n, err := strconv.ParseInt(cl, 10, 64); err == nil && n >= 0 {
			w.clen = n
		} else {
			w.sent = w.header.Clone()
			w.sent.Del("Content-Length")
		}
	}
	if w.clen >= 0 || w.noBody {
		w.commit(false) // nothing to wait for
	} else {
		w.sent = w.header.Clone() // later changes do not count, as in net/http
	}
}

func (w *h1Writer) Write(p []byte) (int, error) {
	if !w.wroteHdr {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.noBody {
		return 0, http.ErrBodyNotAllowed
	}
	if !w.committed {
		if len(w.pending)+len(p) <= h1BufferBody {
			w.pending = append(w.pending, p...)
			return len(p), nil
		}
		w.commit(false)
	}
	return w.writeBody(p)
}

// Flush sends what is written so far (http.Flusher).
func (w *h1Writer) Flush() { _ = w.FlushError() }

// FlushError is Flush reporting the write error (used by
// http.ResponseController).
func (w *h1Writer) FlushError() error {
	if !w.wroteHdr {
		w.WriteHeader(http.StatusOK)
	}
	if !w.committed {
		w.commit(false)
	}
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = err
	}
	return w.err
}

// commit writes the status line and headers, choosing the body's framing:
// the declared length; the held-back body's length when the handler is
// done (final); else chunked (HTTP/1.1) or until close (HTTP/1.0).
func (w *h1Writer) commit(final bool) {
	w.committed = true
	switch {
	case w.noBody || w.clen >= 0:
	case final:
		w.clen = int64(len(w.pending))
	case w.req.ProtoAtLeast(1, 1):
		w.chunked = true
	default:
		w.closeAfter = true
	}
	bw := w.bw
	text := http.StatusText(w.status)
	// bufio.Writer errors are sticky: the Flush in finish reports them.
	if text == "" {
		text = "status code " + strconv.Itoa(w.status)
	}
	bw.WriteString("HTTP/1.1 ")
	bw.WriteString(strconv.Itoa(w.status))
	bw.WriteByte(' ')
	bw.WriteString(text)
	bw.WriteString("\r\n")
	for k, vs := range w.sent {
		if k == "Content-Length" || k == "Transfer-Encoding" || k == "Connection" {
			continue
		}
		for _, v := range vs {
			bw.WriteString(k)
			bw.WriteString(": ")
			bw.WriteString(headerValue(v))
			bw.WriteString("\r\n")
		}
	}
	switch {
	case w.noBody && w.status != http.StatusNoContent && w.status != http.StatusNotModified && w.clen >= 0:
		bw.WriteString("Content-Length: " + strconv.FormatInt(w.clen, 10) + "\r\n") // HEAD
	case w.noBody:
	case w.chunked:
		bw.WriteString("Transfer-Encoding: chunked\r\n")
	case w.clen >= 0:
		bw.WriteString("Content-Length: " + strconv.FormatInt(w.clen, 10) + "\r\n")
	}
	if w.closeAfter {
		bw.WriteString("Connection: close\r\n")
	}
	bw.WriteString("\r\n")
	if p := w.pending; len(p) > 0 {
		w.pending = nil
		_, _ = w.writeBody(p)
	}
}

// headerValue keeps a header value on one line.
func headerValue(v string) string {
	if strings.ContainsAny(v, "\r\n") {
		return strings.NewReplacer("\r", " ", "\n", " ").Replace(v)
	}
	return v
}

// errBodyTooLong is a write past the declared Content-Length.
var errBodyTooLong = errors.New("proxy: body longer than its Content-Length")

func (w *h1Writer) writeBody(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if w.clen >= 0 && w.written+int64(len(p)) > w.clen {
		w.err = errBodyTooLong
		w.closeAfter = true
		return 0, w.err
	}
	var err error
	if w.chunked {
		_, _ = w.bw.WriteString(strconv.FormatInt(int64(len(p)), 16))
		_, _ = w.bw.WriteString("\r\n")
		_, _ = w.bw.Write(p)
		_, err = w.bw.WriteString("\r\n")
	} else {
		_, err = w.bw.Write(p)
	}
	if err != nil {
		w.err = err
		return 0, err
	}
	w.written += int64(len(p))
	return len(p), nil
}

// finish completes the response after the handler returned.
func (w *h1Writer) finish() error {
	if !w.wroteHdr {
		w.WriteHeader(http.StatusOK)
	}
	if !w.committed {
		w.commit(true)
	}
	if w.chunked && w.err == nil {
		_, _ = w.bw.WriteString("0\r\n\r\n")
	}
	if w.clen >= 0 && w.written < w.clen && !w.noBody {
		w.closeAfter = true // the client waits for bytes that will not come
	}
	if w.err != nil {
		return w.err
	}
	return w.bw.Flush()
}
