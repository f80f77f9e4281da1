// supervise: a local sealed run's relay as its container's own process (docs/docker.md), so that no `docker exec`
// is made for it (an exec cost ~35 ms of a run under runc and ~150 under gVisor). It listens as serve does, then
// runs the agent's command, and carries the command's standard streams on stream 0 of the same frames, over the
// container's own standard input and output (the `docker run -i` stream stashbase holds):
//   - with a size (ROWSxCOLS), the command gets a terminal of its own, a pseudo-terminal made here, whose output is
//     OUT frames and whose input is IN frames; RESIZE frames set its size;
//   - with -, the command's standard input, output and error are pipes: IN, OUT and ERR frames.
//
// It runs as the agent's user (a container's process has no other): the agent can signal it, which ends its own run
// (the container ends with this process), and nothing more. It is not dumpable, so the agent cannot trace it, read
// its memory or open its descriptors (the stream to stashbase); and everything it sends stashbase is read there as
// hostile input anyway (lib/relay/mux.ts), as the exec'd relay's always was. Its exit status is the command's (a
// signal's death: 128 and the signal's number), as the container's init reports it.
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// The ioctls as Linux numbers them for x86_64 and arm64 alike (asm-generic).
const (
	ioctlTIOCSPTLCK = 0x40045431
	ioctlTIOCGPTN   = 0x80045430
	ioctlTIOCSWINSZ = 0x5414
	// How long the command's output may still come once it has exited (a process it left behind holding it open).
	drainWait = 500 * time.Millisecond
	// What is read of it after that, at most: what its pipe or terminal held then (a process that keeps writing
	// does not keep the run alive).
	drainAfterStop = 1 << 20
)

// terminal: the command's standard streams on stream 0.
type terminal struct {
	r    *relay
	mu   sync.Mutex
	cond *sync.Cond
	// Output bytes stashbase lets us send before it grants more.
	credit int
	// Input stashbase sent, not yet written to the command.
	in    [][]byte
	inEOF bool
	// Where input goes: the pseudo-terminal's master, or the command's standard input pipe.
	sink   *os.File
	master *os.File
	// Pumps holding output they read and have not sent; told to stop reading once the command's output is drained.
	holding atomic.Int32
	stop    atomic.Bool
}

func (t *terminal) frame(typ byte, p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch typ {
	case tIn:
		if !t.inEOF && len(p) > 0 {
			t.in = append(t.in, p)
		}
	case tEOF:
		t.inEOF = true
	case tWindow:
		if len(p) == 4 {
			t.credit += int(binary.BigEndian.Uint32(p))
		}
	case tResize:
		if len(p) == 4 && t.master != nil {
			setSize(t.master, binary.BigEndian.Uint16(p[0:2]), binary.BigEndian.Uint16(p[2:4]))
		}
	}
	t.cond.Broadcast()
}

// input writes what stashbase sent to the command, granting it back once written; at its end a pipe is closed (a
// terminal's input has no end of its own: it stays open).
func (t *terminal) input() {
	owed := 0
	for {
		t.mu.Lock()
		for len(t.in) == 0 && !t.inEOF {
			t.cond.Wait()
		}
		if len(t.in) == 0 {
			t.mu.Unlock()
			if t.master == nil {
				t.sink.Close()
			}
			return
		}
		chunk := t.in[0]
		t.in = t.in[1:]
		idle := len(t.in) == 0
		t.mu.Unlock()
		if _, err := t.sink.Write(chunk); err != nil {
			// The command reads no more: what comes is dropped, and granted back so that stashbase never waits on it.
			t.mu.Lock()
			t.in = nil
			t.mu.Unlock()
		}
		owed += len(chunk)
		if owed >= grantBatch || idle {
			var w [4]byte
			binary.BigEndian.PutUint32(w[:], uint32(owed))
			owed = 0
			t.r.send(tWindow, 0, w[:])
		}
	}
}

// pump carries one of the command's outputs to stashbase as `typ` frames, within the credit stashbase grants.
func (t *terminal) pump(f *os.File, typ byte, done chan<- struct{}) {
	defer func() { done <- struct{}{} }()
	buf := make([]byte, maxPayload)
	// Read once told to stop: what waited in the pipe or terminal then, never more than drainAfterStop.
	after := 0
	for {
		if t.stop.Load() {
			if after >= drainAfterStop {
				return
			}
			f.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		}
		n, err := f.Read(buf)
		if t.stop.Load() {
			after += n
		}
		if n > 0 {
			t.holding.Add(1)
		}
		for off := 0; off < n; {
			t.mu.Lock()
			for t.credit == 0 {
				t.cond.Wait()
			}
			k := n - off
			if k > t.credit {
				k = t.credit
			}
			t.credit -= k
			t.mu.Unlock()
			t.r.send(typ, 0, buf[off:off+k])
			off += k
		}
		if n > 0 {
			t.holding.Add(-1)
		}
		if err != nil {
			return
		}
	}
}

func parseSize(s string) (uint16, uint16, bool) {
	if s == "-" {
		return 0, 0, true
	}
	rows, cols, found := strings.Cut(s, "x")
	r, err1 := strconv.ParseUint(rows, 10, 16)
	c, err2 := strconv.ParseUint(cols, 10, 16)
	return uint16(r), uint16(c), found && err1 == nil && err2 == nil && r > 0 && c > 0
}

func ioctl(f *os.File, req uintptr, arg unsafe.Pointer) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); e != 0 {
		return e
	}
	return nil
}

func setSize(f *os.File, rows, cols uint16) {
	ws := [4]uint16{rows, cols, 0, 0}
	ioctl(f, ioctlTIOCSWINSZ, unsafe.Pointer(&ws))
}

// openTerminal: a pseudo-terminal's master and its other end, of that size.
func openTerminal(rows, cols uint16) (*os.File, *os.File, error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	var zero int32
	if err := ioctl(m, ioctlTIOCSPTLCK, unsafe.Pointer(&zero)); err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("unlockpt: %v", err)
	}
	var n uint32
	if err := ioctl(m, ioctlTIOCGPTN, unsafe.Pointer(&n)); err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("ptsname: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	setSize(m, rows, cols)
	return m, s, nil
}

func fail(code int, format string, a ...any) {
	fmt.Fprintf(os.Stderr, "stashbase: "+format+"\n", a...)
	os.Exit(code)
}

func supervise(port int, maxConns int, rows, cols uint16, argv []string) {
	// Not dumpable: a process of the agent's user cannot trace it, read its memory or open its descriptors.
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); e != 0 {
		fail(125, "the sealed network's relay cannot keep the agent out of it (prctl: %v)", e)
	}
	r, ln := listen(port, maxConns)
	t := &terminal{r: r, credit: window}
	t.cond = sync.NewCond(&t.mu)
	r.term = t
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fail(127, "%s: command not found", argv[0])
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Env: os.Environ()}
	// outs: what the pumps read; theirs: the command's ends, closed here once it has them.
	var outs, theirs []*os.File
	if rows > 0 {
		m, s, err := openTerminal(rows, cols)
		if err != nil {
			fail(125, "cannot make the agent's terminal: %v", err)
		}
		t.master, t.sink = m, m
		cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		outs, theirs = []*os.File{m}, []*os.File{s}
	} else {
		inR, inW, err1 := os.Pipe()
		outR, outW, err2 := os.Pipe()
		errR, errW, err3 := os.Pipe()
		if err1 != nil || err2 != nil || err3 != nil {
			fail(125, "cannot make the agent's standard streams")
		}
		t.sink = inW
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
		outs, theirs = []*os.File{outR, errR}, []*os.File{inR, outW, errW}
	}
	// Signals the container's init passes on (docker's own, stashbase's through the docker client) go to the command.
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	// Listening before anything of the agent runs: its first connection finds the relay (what the gate waited for).
	r.send(tHello, 0, []byte("stashbase-relay 1"))
	go r.readFrames(os.Stdin)
	go r.accept(ln)
	if err := cmd.Start(); err != nil {
		fail(126, "cannot run %s: %v", argv[0], err)
	}
	// The command's ends of its streams are its own now.
	for _, f := range theirs {
		f.Close()
	}
	go t.input()
	done := make(chan struct{}, len(outs))
	kinds := []byte{tOut, tErr}
	for i, f := range outs {
		go t.pump(f, kinds[i], done)
	}
	go func() {
		for s := range signals {
			cmd.Process.Signal(s)
		}
	}()
	cmd.Wait()
	// What it wrote before it ended goes out first, all of it, however slowly stashbase takes it (found in review: a
	// tail waiting for credit from a slow reader was dropped): a pump holding what it read waits for credit as long as
	// it takes. A process it left holding its output open is read for drainWait more, then only for what waits in the
	// pipe or terminal already (second review: one that kept writing kept the run alive; a docker container ends its
	// processes with its command): a read deadline wakes each pump; should a descriptor take none, a pump that holds
	// nothing is not waited for past a second more.
	deadline := time.Now().Add(drainWait)
	var stopped time.Time
	for ended := 0; ended < len(outs); {
		select {
		case <-done:
			ended++
		case <-time.After(10 * time.Millisecond):
			if stopped.IsZero() && time.Now().After(deadline) {
				t.stop.Store(true)
				stopped = time.Now()
				for _, f := range outs {
					f.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
				}
			}
			if !stopped.IsZero() && time.Since(stopped) > time.Second && t.holding.Load() == 0 {
				ended = len(outs)
			}
		}
	}
	st := cmd.ProcessState.Sys().(syscall.WaitStatus)
	r.outMu.Lock()
	r.out.Flush()
	if st.Signaled() {
		os.Exit(128 + int(st.Signal()))
	}
	os.Exit(st.ExitStatus())
}
