// Command noinit prints the text of the HTML on its standard input: a
// program that links htmltok, for TestNoInit to look for the package's
// initialisation code in.
package main

import (
	"os"

	"acpd/tools/internal/htmltok"
)

func main() {
	z := htmltok.NewTokenizer(os.Stdin)
	for z.Next() != htmltok.ErrorToken {
		os.Stdout.Write(z.Text())
	}
}
