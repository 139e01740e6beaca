package proxy

import (
	"time"

	"github.com/mcpdrill/mcpdrill/faults"
)

// port is where one frame's action takes effect: each transport makes one
// per frame it decides, and execute is the only interpreter of actions.
type port interface {
	// forward delivers the frame's own bytes, as they arrived.
	forward()
	// deliver delivers b in the frame's place (twice for a duplicate).
	deliver(b []byte)
	// deliverCut delivers b, the frame cut short, and ends the stream
	// abnormally where the transport can.
	deliverCut(b []byte)
	// extra delivers b, a frame of the proxy's own, right after the frame.
	extra(b []byte)
	// replyBack sends b to the frame's sender, in the receiver's name.
	replyBack(b []byte)
	// drop delivers nothing; withhold delivers nothing and leaves the
	// receiver's side waiting, as a lost frame would.
	drop()
	withhold()
	// delay delivers b after d.
	delay(b []byte, d time.Duration)
	// dribble delivers b in chunks of chunk bytes, gap apart.
	dribble(b []byte, chunk int, gap time.Duration)
	// disconnect ends the connection; kill ends the server with it.
	disconnect()
	kill()
}

// execute carries out action a, decided for frame f, on p.
func execute(f *faults.Frame, a faults.Action, p port) {
	if a.Reply != nil {
		p.replyBack(a.Reply)
	}
	out := a.Out(f.Raw)
	switch a.Kind {
	case faults.Forward:
		p.forward()
	case faults.Replace:
		if a.Cut {
			p.deliverCut(a.Bytes)
			return
		}
		p.deliver(a.Bytes)
	case faults.Drop:
		p.drop()
	case faults.Withhold:
		p.withhold()
	case faults.Delay:
		p.delay(out, a.Delay)
	case faults.Duplicate:
		p.deliver(out)
		p.deliver(out)
	case faults.Slow:
		p.dribble(out, a.Chunk, a.Gap)
	case faults.Close:
		p.disconnect()
		return
	case faults.Kill:
		p.kill()
		return
	}
	if a.Extra != nil {
		p.extra(a.Extra)
	}
}
