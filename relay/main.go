// stashbase-relay: the only way out of a sealed Docker run (docs/docker.md).
// The agent's container has no network interface but loopback. This relay,
// mounted read-only into it and started by stashbase with `docker exec -i`
// as a user of its own, listens on 127.0.0.1:PORT there and carries each
// connection, multiplexed, over its standard input and output (the engine's
// exec stream) to the run's proxy on stashbase's side (lib/relay/mux.ts).
//
//	stashbase-relay serve PORT [MAX]  the relay; at most MAX connections at once (1024), more are closed at once
//	stashbase-relay gate PORT -- CMD  waits until the relay listens, then runs CMD in its place
//	stashbase-relay supervise PORT MAX (-|ROWSxCOLS) -- CMD
//	                                  a local sealed run's container process (no exec): listens as serve does,
//	                                  then runs CMD on a terminal of its own of that size (or, with -, on pipes),
//	                                  carrying its standard streams on stream 0 of the same frames (supervise.go)
//	stashbase-relay lease SECONDS     a remote run's lease (docs/remote.md): the init of the process
//	                                  namespace the agent's container joins; every byte on its standard
//	                                  input renews it; at end of input, or after SECONDS without a
//	                                  byte, it exits, and the kernel kills every process of the agent
//
// The framing (the same in lib/relay/frames.ts): a 9-byte header, then the
// payload. Header: type (1 byte), stream id (4 bytes, big-endian), payload
// length (4 bytes, big-endian, at most 32 KiB).
//
//	HELLO  relay -> stashbase, stream 0: "stashbase-relay 1", once listening
//	OPEN   relay -> stashbase: a new connection, ids increasing from 1
//	DATA   both ways, within the receiver's window
//	EOF    both ways: the sender sends no more on the stream
//	CLOSE  both ways: the stream is over (what came before it is delivered first)
//	WINDOW both ways: 4 bytes, more bytes the sender may send on the stream (granted in batches of 32 KiB or more)
//
// Each side may send 128 KiB on a stream before the other grants more. A
// connection is opened toward stashbase only once its client has sent a byte
// (the proxy's clients speak first), so the gate's probe costs nothing.
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	tHello  = 1
	tOpen   = 2
	tData   = 3
	tEOF    = 4
	tClose  = 5
	tWindow = 6
	// On stream 0, between stashbase and the supervisor (supervise): the agent's standard input (stashbase -> relay;
	// EOF on stream 0 ends it), its standard output and error (relay -> stashbase, within the window stashbase grants
	// with WINDOW on stream 0; the relay grants WINDOW on stream 0 for input it has written), and a window's new size
	// (stashbase -> relay: rows and columns, 2 bytes each).
	tIn     = 7
	tOut    = 8
	tErr    = 9
	tResize = 10

	maxPayload = 32 << 10
	// Connections at once when stashbase names no bound (serve PORT MAX).
	defaultMaxConns = 1024
	// A connection's kernel send buffer, and how long a write may wait once stashbase has ended the stream.
	sendBuffer = 64 << 10
	// A connection's kernel receive buffer (the kernel doubles it): set, it is not grown by the kernel's tuning. Unset,
	// a client that writes and never reads, whose stream stashbase has stopped granting, had ~400 KiB queued in the
	// relay's socket (review, round 39: in a remote run that is the lease's memory, outside the agent's limits).
	recvBuffer      = 32 << 10
	endingWriteWait = 10 * time.Second
	window          = 128 << 10
	// Credit goes back in batches of at least this much: a WINDOW frame per small write would double the frames.
	grantBatch = 32 << 10
)

type stream struct {
	id   uint32
	conn *net.TCPConn
	// The connection closed and its place under the relay's bound given back, once, however it ends.
	closeOnce sync.Once
	mu        sync.Mutex
	cond      *sync.Cond
	credit    int      // what we may still send to stashbase
	owed      int      // written to the client, not yet granted back
	queue     [][]byte // what stashbase sent, not yet written to the client
	eof       bool     // stashbase sends no more
	closed    bool
	sentEOF   bool // the client sent no more, and stashbase was told
	downDone  bool // all stashbase sent was written, and the client's side shut
	// stashbase closed the stream: what it sent before is written first (a refusal
	// the proxy sent and closed at once must reach the client), then the connection goes.
	closeAfter bool
}

type relay struct {
	// Connections accepted and not yet over (opened or not), at most maxConns.
	conns    atomic.Int64
	maxConns int64
	outMu    sync.Mutex
	out      *bufio.Writer
	mu       sync.Mutex
	streams  map[uint32]*stream
	next     uint32
	// The agent's terminal or standard streams, on stream 0 (supervise); nil for serve.
	term *terminal
}

func (r *relay) send(t byte, id uint32, payload []byte) {
	var h [9]byte
	h[0] = t
	binary.BigEndian.PutUint32(h[1:5], id)
	binary.BigEndian.PutUint32(h[5:9], uint32(len(payload)))
	r.outMu.Lock()
	defer r.outMu.Unlock()
	if _, err := r.out.Write(h[:]); err != nil {
		os.Exit(0)
	}
	if _, err := r.out.Write(payload); err != nil {
		os.Exit(0)
	}
	if err := r.out.Flush(); err != nil {
		// stashbase's side is gone: so is the way out.
		os.Exit(0)
	}
}

func (r *relay) drop(s *stream) {
	r.mu.Lock()
	delete(r.streams, s.id)
	r.mu.Unlock()
	s.mu.Lock()
	s.closed = true
	s.cond.Broadcast()
	s.mu.Unlock()
	r.closeConn(s)
}

// closeConn closes the connection and gives its place back, once. Only then does it stop counting: a connection the
// client half-closed still holds what stashbase sent until it is written or given up on (found in review: counted
// down at the client's end of input, a client that never read could hold any number of them).
func (r *relay) closeConn(s *stream) {
	s.closeOnce.Do(func() {
		s.conn.Close()
		r.conns.Add(-1)
	})
}

// From the client to stashbase: OPEN on the first byte, then DATA within the window.
func (r *relay) upstream(s *stream) {
	// A connection that has sent nothing holds a small buffer only (an agent may open thousands and send nothing).
	buf := make([]byte, 512)
	opened := false
	for {
		n, err := s.conn.Read(buf)
		if n > 0 && len(buf) < maxPayload {
			big := make([]byte, maxPayload)
			copy(big, buf[:n])
			buf = big
		}
		if n > 0 {
			if !opened {
				// The id and its OPEN together: stashbase takes ids only in increasing order.
				r.mu.Lock()
				r.next++
				s.id = r.next
				r.streams[s.id] = s
				r.send(tOpen, s.id, nil)
				r.mu.Unlock()
				opened = true
				go r.downstream(s)
			}
			for off := 0; off < n; {
				s.mu.Lock()
				for s.credit == 0 && !s.closed {
					s.cond.Wait()
				}
				if s.closed {
					s.mu.Unlock()
					return
				}
				k := n - off
				if k > s.credit {
					k = s.credit
				}
				s.credit -= k
				s.mu.Unlock()
				r.send(tData, s.id, buf[off:off+k])
				off += k
			}
		}
		if err != nil {
			if !opened {
				r.closeConn(s)
				return
			}
			if errors.Is(err, io.EOF) {
				r.send(tEOF, s.id, nil)
				s.mu.Lock()
				s.sentEOF = true
				done := s.downDone
				s.mu.Unlock()
				// Both ways over: the stream is forgotten on both sides without a word.
				if done {
					r.drop(s)
				}
			} else {
				r.send(tClose, s.id, nil)
				r.drop(s)
			}
			return
		}
	}
}

// From stashbase to the client: what DATA queued, in order; WINDOW once written.
func (r *relay) downstream(s *stream) {
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.eof && !s.closed {
			s.cond.Wait()
		}
		if s.closed {
			s.mu.Unlock()
			return
		}
		if len(s.queue) == 0 && s.eof {
			s.downDone = true
			done := s.sentEOF || s.closeAfter
			s.mu.Unlock()
			s.conn.CloseWrite()
			if done {
				r.drop(s)
			}
			return
		}
		chunk := s.queue[0]
		s.queue = s.queue[1:]
		ending := s.eof
		s.mu.Unlock()
		// Once stashbase has said all it will, a client that does not read is given a while, not forever.
		if ending {
			s.conn.SetWriteDeadline(time.Now().Add(endingWriteWait))
		}
		if _, err := s.conn.Write(chunk); err != nil {
			r.send(tClose, s.id, nil)
			r.drop(s)
			return
		}
		s.owed += len(chunk)
		if s.owed >= grantBatch {
			var w [4]byte
			binary.BigEndian.PutUint32(w[:], uint32(s.owed))
			s.owed = 0
			r.send(tWindow, s.id, w[:])
		}
	}
}

func (r *relay) readFrames(in io.Reader) {
	br := bufio.NewReaderSize(in, 64<<10)
	var h [9]byte
	for {
		if _, err := io.ReadFull(br, h[:]); err != nil {
			// stashbase's side closed: nothing gets out any more.
			os.Exit(0)
		}
		t, id, n := h[0], binary.BigEndian.Uint32(h[1:5]), binary.BigEndian.Uint32(h[5:9])
		if n > maxPayload {
			fmt.Fprintln(os.Stderr, "stashbase-relay: oversized frame")
			os.Exit(2)
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(br, payload); err != nil {
			os.Exit(0)
		}
		if id == 0 {
			if r.term != nil {
				r.term.frame(t, payload)
			}
			continue
		}
		r.mu.Lock()
		s := r.streams[id]
		r.mu.Unlock()
		if s == nil {
			continue
		}
		switch t {
		case tData:
			s.mu.Lock()
			s.queue = append(s.queue, payload)
			s.cond.Broadcast()
			s.mu.Unlock()
		case tEOF:
			s.mu.Lock()
			s.eof = true
			s.cond.Broadcast()
			s.mu.Unlock()
		case tClose:
			s.mu.Lock()
			s.eof = true
			s.closeAfter = true
			s.cond.Broadcast()
			s.mu.Unlock()
		case tWindow:
			if n == 4 {
				s.mu.Lock()
				s.credit += int(binary.BigEndian.Uint32(payload))
				s.cond.Broadcast()
				s.mu.Unlock()
			}
		}
	}
}

func serve(port int, maxConns int) {
	r, ln := listen(port, maxConns)
	r.send(tHello, 0, []byte("stashbase-relay 1"))
	go r.readFrames(os.Stdin)
	r.accept(ln)
}

// listen: the relay's listener on 127.0.0.1:PORT, and the relay whose frames go to standard output.
func listen(port int, maxConns int) (*relay, *net.TCPListener) {
	// In a remote run's lease container, whose process count is bounded: a few threads, however many CPUs the engine's host has.
	if runtime.NumCPU() > 4 {
		runtime.GOMAXPROCS(4)
	}
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		fmt.Fprintf(os.Stderr, "stashbase-relay: cannot listen on 127.0.0.1:%d: %v\n", port, err)
		os.Exit(1)
	}
	return &relay{out: bufio.NewWriterSize(os.Stdout, 64<<10), streams: map[uint32]*stream{}, maxConns: int64(maxConns)}, ln
}

func (r *relay) accept(ln *net.TCPListener) {
	for {
		c, err := ln.AcceptTCP()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		// Past its bound (stashbase's own limit of streams and some room), a connection is closed at once: the agent's
		// idle connections cannot grow the relay's memory, which a remote run's lease container holds, outside the agent's limits.
		if r.conns.Add(1) > r.maxConns {
			r.conns.Add(-1)
			c.SetLinger(0)
			c.Close()
			continue
		}
		c.SetNoDelay(true)
		// What the kernel holds for a client that does not read, bounded (loopback would let it grow to megabytes).
		c.SetWriteBuffer(sendBuffer)
		c.SetReadBuffer(recvBuffer)
		s := &stream{conn: c, credit: window}
		s.cond = sync.NewCond(&s.mu)
		go r.upstream(s)
	}
}

func gate(port int, argv []string) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp4", addr, time.Second)
		if err == nil {
			// Closed without a byte sent: the relay opens nothing for it.
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			fail(125, "the sealed network's relay did not start within 60 s")
		}
		time.Sleep(3 * time.Millisecond)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fail(127, "%s: command not found", argv[0])
	}
	err = syscall.Exec(path, argv, os.Environ())
	fail(126, "cannot run %s: %v", argv[0], err)
}

// lease: see the header. Exits 0 once it has killed (or had nothing to kill), 2 on misuse.
func lease(seconds int) {
	// Only as the init of its process namespace does its exit end the agent's processes, and only there are
	// SIGKILL and SIGSTOP from inside kept from it: anywhere else it refuses, and the run never starts.
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "stashbase-relay: the lease must be the init of its process namespace (pid 1)")
		os.Exit(2)
	}
	// The init of the process namespace the agent's container joins: from inside it, SIGKILL and SIGSTOP never reach
	// this process, nor any signal it has no handler for. The stop signals are ignored (no handler), the ending ones
	// end the lease (the agent may end its own run), and children the namespace hands over are reaped.
	signal.Ignore(syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	ending := make(chan os.Signal, 1)
	signal.Notify(ending, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	children := make(chan os.Signal, 16)
	signal.Notify(children, syscall.SIGCHLD)
	go func() {
		for range children {
			for {
				var ws syscall.WaitStatus
				pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		}
	}()
	renewed := make(chan struct{}, 1)
	ended := make(chan struct{})
	go func() {
		buf := make([]byte, 512)
		for {
			n, err := os.Stdin.Read(buf)
			if n > 0 {
				select {
				case renewed <- struct{}{}:
				default:
				}
			}
			if err != nil {
				close(ended)
				return
			}
		}
	}()
	// Its holder starts the agent's container once this line is read.
	fmt.Println("stashbase-relay lease")
	why := ""
	for why == "" {
		select {
		case <-renewed:
		case <-ended:
			why = "its holder went away"
		case s := <-ending:
			why = fmt.Sprintf("signal %v", s)
		case <-time.After(time.Duration(seconds) * time.Second):
			why = fmt.Sprintf("no word from its holder for %d s", seconds)
		}
	}
	// The init of a process namespace exiting: the kernel kills every other process in it, the agent's all.
	fmt.Fprintf(os.Stderr, "stashbase-relay: lease ended (%s): ending the run\n", why)
}

func main() {
	a := os.Args
	if len(a) == 3 && a[1] == "lease" {
		seconds, err := strconv.Atoi(a[2])
		if err == nil && seconds > 0 && seconds <= 86400 {
			lease(seconds)
			return
		}
	}
	if len(a) >= 3 {
		port, err := strconv.Atoi(a[2])
		if err == nil && port > 0 && port < 65536 {
			if a[1] == "serve" && len(a) == 3 {
				serve(port, defaultMaxConns)
				return
			}
			if a[1] == "serve" && len(a) == 4 {
				if max, err := strconv.Atoi(a[3]); err == nil && max > 0 && max <= 1<<20 {
					serve(port, max)
					return
				}
			}
			if a[1] == "supervise" && len(a) >= 7 && a[5] == "--" {
				max, err := strconv.Atoi(a[3])
				rows, cols, ok := parseSize(a[4])
				if err == nil && max > 0 && max <= 1<<20 && ok {
					supervise(port, max, rows, cols, a[6:])
					return
				}
			}
			if a[1] == "gate" && len(a) >= 5 && a[3] == "--" {
				gate(port, a[4:])
				return
			}
		}
	}
	fmt.Fprintln(os.Stderr, "usage: stashbase-relay serve PORT [MAX] | gate PORT -- COMMAND... | supervise PORT MAX (-|ROWSxCOLS) -- COMMAND... | lease SECONDS")
	os.Exit(2)
}
