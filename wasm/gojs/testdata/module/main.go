//go:build js && wasm

// Command module is the test module: one binary for every scenario, chosen
// by its first argument, so that the tests compile one module (compiling
// Go's runtime is most of a test run's time):
//
//	hello    prints through fmt (fs.write and its callback), os.Stderr, and
//	         the runtime's println (runtime.wasmWrite)
//	exit     prints, then os.Exit(3)
//	panic    panics in main: exit code 2, the panic on stderr
//	sched    time.Sleep, a timer, AfterFunc, goroutines over channels
//	bridge   publishes globalThis.__plingBridge and blocks (bridge.go)
//	argsenv  (also without arguments) prints its arguments, environment,
//	         working directory, ids, a file-system error and its time zone
package main

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

func main() {
	mode := "argsenv"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	switch mode {
	case "hello":
		fmt.Println("hello, world")
		fmt.Fprintln(os.Stderr, "to stderr")
		println("runtime print")
	case "exit":
		fmt.Println("bye")
		os.Exit(3)
	case "panic":
		panic("boom")
	case "sched":
		sched()
	case "bridge":
		bridge()
	default:
		argsenv()
	}
}

func argsenv() {
	fmt.Printf("args=%q\n", os.Args)
	fmt.Printf("GREETING=%s\n", os.Getenv("GREETING"))
	fmt.Printf("environ=%q\n", os.Environ())
	wd, err := os.Getwd()
	fmt.Printf("wd=%s err=%v\n", wd, err)
	fmt.Printf("pid=%d uid=%d\n", os.Getpid(), os.Getuid())
	_, err = os.ReadFile("/etc/hostname")
	fmt.Printf("readfile ENOSYS=%v\n", errors.Is(err, syscall.ENOSYS))
	_, offset := time.Now().Zone()
	fmt.Printf("zoneoffset=%d\n", offset)
}

func sched() {
	start := time.Now()
	time.Sleep(20 * time.Millisecond)
	fmt.Printf("slept>=20ms %v\n", time.Since(start) >= 20*time.Millisecond)

	t := time.NewTimer(10 * time.Millisecond)
	<-t.C
	fmt.Println("timer fired")

	done := make(chan struct{})
	time.AfterFunc(5*time.Millisecond, func() { close(done) })
	<-done
	fmt.Println("afterfunc ran")

	jobs := make(chan int)
	results := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				time.Sleep(time.Millisecond)
				results <- j * j
			}
		}()
	}
	go func() {
		for j := 1; j <= 20; j++ {
			jobs <- j
		}
		close(jobs)
	}()
	go func() { wg.Wait(); close(results) }()
	sum := 0
	for r := range results {
		sum += r
	}
	fmt.Printf("sum of squares=%d\n", sum)
}
