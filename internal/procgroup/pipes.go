package procgroup

import (
	"os"
	"os/exec"
)

// StartPiped is [Start] with fresh pipes for the child's stdin and stdout:
// it returns the Group, the write end of stdin and the read end of stdout,
// which the caller owns and closes. cmd must have Stdin and Stdout unset.
//
// The pipes are os.Pipe files, not StdinPipe/StdoutPipe: Wait, which may
// run as soon as the child exits, does not close them, so the caller reads
// everything the child wrote. On failure nothing is left open.
func StartPiped(cmd *exec.Cmd) (g *Group, stdin, stdout *os.File, err error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	g, err = Start(cmd)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, nil, nil, err
	}
	return g, inW, outR, nil
}
