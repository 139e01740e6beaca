package rawconn

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
)

// pair returns both ends of a loopback TCP connection, the first wrapped.
func pair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); peer.Close() })
	return Wrap(c), peer
}

func TestWrap(t *testing.T) {
	c, _ := pair(t)
	_, plain := c.(*net.TCPConn)
	if wrapped := !plain; wrapped != (runtime.GOOS == "linux") {
		t.Fatalf("Wrap of a TCP connection on %s: wrapped %v", runtime.GOOS, wrapped)
	}
	a, b := net.Pipe() // no descriptor: returned as is
	defer a.Close()
	defer b.Close()
	if Wrap(a) != a {
		t.Fatal("Wrap changed a connection without a descriptor")
	}
}

// TestReadWrite moves data both ways, with writes far larger than the
// socket buffers (partial writes, waits for writability) read in small
// pieces, and ends with io.EOF when the peer closes.
func TestReadWrite(t *testing.T) {
	for _, size := range []int{1, 1 << 10, 8 << 20} {
		c, peer := pair(t)
		msg := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		// wrapped → peer
		errc := make(chan error, 1)
		go func() {
			n, err := c.Write(msg)
			if err == nil && n != len(msg) {
				err = io.ErrShortWrite
			}
			errc <- err
		}()
		got := make([]byte, 0, size)
		buf := make([]byte, 1000)
		for len(got) < size {
			n, err := peer.Read(buf)
			if err != nil {
				t.Fatalf("%d: peer read: %v", size, err)
			}
			got = append(got, buf[:n]...)
		}
		if err := <-errc; err != nil {
			t.Fatalf("%d: write: %v", size, err)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("%d: the peer read other bytes than were written", size)
		}
		// peer → wrapped, then EOF
		go func() {
			_, _ = peer.Write(msg)
			peer.Close()
		}()
		all, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("%d: read: %v", size, err)
		}
		if !bytes.Equal(all, msg) {
			t.Fatalf("%d: read other bytes than the peer wrote", size)
		}
		if n, err := c.Read(buf); n != 0 || err != io.EOF {
			t.Fatalf("%d: read after EOF = %d, %v; want 0, EOF", size, n, err)
		}
	}
}

// TestDeadlinesAndClose: a read waits for data, its deadline ends it with
// a timeout, and Close ends a waiting read and every later one.
func TestDeadlinesAndClose(t *testing.T) {
	c, peer := pair(t)
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := c.Read(make([]byte, 8))
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read past its deadline: %v, want a timeout", err)
	}
	_ = c.SetReadDeadline(time.Time{})
	_, _ = peer.Write([]byte("x"))
	if n, err := c.Read(make([]byte, 8)); n != 1 || err != nil {
		t.Fatalf("read after the deadline was cleared = %d, %v", n, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 8))
		done <- err
	}()
	time.Sleep(10 * time.Millisecond) // let the read wait (either order passes)
	c.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read ended by Close: %v, want net.ErrClosed", err)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after Close: %v, want net.ErrClosed", err)
	}
}

// TestWriteToGonePeer: writing to a connection the peer has reset fails
// with an error (and no signal ends the process).
func TestWriteToGonePeer(t *testing.T) {
	c, peer := pair(t)
	if tc, ok := peer.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // close with a reset
	}
	peer.Close()
	chunk := make([]byte, 64<<10)
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		_, err = c.Write(chunk)
		if err == nil {
			time.Sleep(time.Millisecond) // the reset crosses loopback
		}
	}
	var op *net.OpError
	if err == nil || !errors.As(err, &op) {
		t.Fatalf("writes to a reset connection: %v, want a *net.OpError", err)
	}
}

// TestIdleAlive: open and quiet is alive; data waiting or the peer gone
// is not.
func TestIdleAlive(t *testing.T) {
	if !CanPeek {
		t.Skip("no peek on " + runtime.GOOS)
	}
	c, peer := pair(t)
	if !IdleAlive(c) {
		t.Fatal("an open, quiet connection is not alive")
	}
	_, _ = peer.Write([]byte("x"))
	waitFor(t, func() bool { return !IdleAlive(c) }, "unread data")
	if n, err := c.Read(make([]byte, 1)); n != 1 || err != nil {
		t.Fatalf("the peek consumed the byte: read %d, %v", n, err)
	}
	peer.Close()
	waitFor(t, func() bool { return !IdleAlive(c) }, "the peer's close")
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if IdleAlive(a) {
		t.Fatal("a connection without a descriptor reported alive")
	}
}

// waitFor polls cond for up to 5 s: what the peer did crosses loopback
// asynchronously.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not seen after 5 s: %s", what)
		}
	}
}

// TestConcurrentWrites: writes from several goroutines do not interleave
// (each takes the socket until all of it is written, as net.Conn's do),
// and reads from several goroutines together see every byte once.
func TestConcurrentWrites(t *testing.T) {
	c, peer := pair(t)
	const size = 1 << 20
	done := make(chan error, 2)
	for _, b := range []byte{'a', 'b'} {
		go func() {
			_, err := c.Write(bytes.Repeat([]byte{b}, size))
			done <- err
		}()
	}
	got := make([]byte, 2*size)
	if _, err := io.ReadFull(peer, got); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	first, second := got[:size], got[size:]
	if bytes.Count(first, first[:1]) != size || bytes.Count(second, second[:1]) != size || first[0] == second[0] {
		t.Fatal("two writes interleaved")
	}

	// Two readers share what the peer writes.
	go func() { _, _ = peer.Write(got); peer.Close() }()
	counts := make(chan int, 2)
	for range 2 {
		go func() {
			n, buf := 0, make([]byte, 4096)
			for {
				m, err := c.Read(buf)
				n += m
				if err != nil {
					counts <- n
					return
				}
			}
		}()
	}
	if total := <-counts + <-counts; total != 2*size {
		t.Fatalf("two readers read %d bytes together, want %d", total, 2*size)
	}
}

// TestNoAllocs: a read or a write of a ready socket allocates nothing.
func TestNoAllocs(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts need a plain build")
	}
	c, peer := pair(t)
	if _, plain := c.(*net.TCPConn); plain {
		t.Skip("no raw calls on " + runtime.GOOS)
	}
	msg, buf := []byte("0123456789"), make([]byte, 10)
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(peer, buf); err != nil {
			t.Fatal(err)
		}
		if _, err := peer.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per write and read, want 0", allocs)
	}
}
