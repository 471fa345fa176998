package session

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// Load loads every program and map of a compiled script. Kernel errors are
// translated into what is missing and what to do; verbose keeps the
// verifier's whole log in the message.
func Load(out *codegen.Output, verbose bool) (*ebpf.Collection, error) {
	return LoadWith(out, verbose, nil)
}

// LoadWith is Load, with the kernel's type IDs that ids holds (the BTF
// cache's) for the targets of tracing programs (loadByKernelTypeID): where
// ids holds every target, the kernel's whole BTF is not decoded.
//
// A merged program (codegen's Program.Merged) that the kernel refuses is
// replaced, in out.Programs, by its probes' own programs, which are loaded
// instead: the verifier may walk a merged program's code past its limit
// where it walks each probe's within it.
func LoadWith(out *codegen.Output, verbose bool, ids KernelTypeIDs) (*ebpf.Collection, error) {
	if err := checkFDs(out, nil, false); err != nil {
		return nil, err
	}
	raiseMemlock()
	for {
		coll, err := loadWith(out, ids)
		switch {
		case err == nil:
			return coll, nil
		case !splitRefused(out, err):
			return nil, translateLoadError(out, err, verbose)
		}
	}
}

// splitRefused replaces the merged program that err says the kernel
// refused by its probes' programs, and reports whether there was one.
func splitRefused(out *codegen.Output, err error) bool {
	if !verifierRefused(err) {
		return false
	}
	for i, p := range out.Programs {
		if len(p.Merged) > 0 && strings.HasPrefix(err.Error(), "program "+p.Name+":") {
			out.Programs = slices.Replace(out.Programs, i, i+1, p.Unmerge()...)
			return true
		}
	}
	return false
}

// verifierRefused reports whether the kernel refused a program for its
// code (the verifier, or its size), not for a limit of the process or
// the kernel's memory.
func verifierRefused(err error) bool {
	var ve *ebpf.VerifierError
	if errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENOMEM) || errors.Is(err, unix.EPERM) {
		return false
	}
	return errors.As(err, &ve) || errors.Is(err, unix.E2BIG)
}

// loadWith loads the maps and the programs that load together; its errors
// are cilium/ebpf's, which name the program.
func loadWith(out *codegen.Output, ids KernelTypeIDs) (*ebpf.Collection, error) {
	cs := &ebpf.CollectionSpec{Maps: allocOnUpdate(out.Maps), Programs: map[string]*ebpf.ProgramSpec{}}
	var byID []*codegen.Program
	for _, p := range out.Programs {
		// Helpers and fentry programs load one by one, later: one that
		// fails costs itself only.
		if (p.Helper == "" || p.Helper == codegen.HelperEntry) && p.Function == "" && p.BPF == nil {
			if _, _, ok := targetType(p.Prog); ok && ids != nil {
				byID = append(byID, p)
				continue
			}
			cs.Programs[p.Name] = p.Prog
		}
	}
	if coll, ok := loadAllByID(cs, byID, ids); ok {
		return coll, nil
	}
	for _, p := range byID {
		cs.Programs[p.Name] = p.Prog
	}
	return newCollection(cs)
}

// loadAllByID loads cs with cilium/ebpf, then each of byID by its target's
// cached type ID; false, with nothing left loaded, where any of it fails
// (the caller then loads it all with cilium/ebpf, for its errors).
func loadAllByID(cs *ebpf.CollectionSpec, byID []*codegen.Program, ids KernelTypeIDs) (*ebpf.Collection, bool) {
	if len(byID) == 0 {
		return nil, false
	}
	for _, p := range byID {
		if name, typ, _ := targetType(p.Prog); !hasKernelTypeID(ids, name, typ) {
			return nil, false
		}
	}
	coll, err := ebpf.NewCollectionWithOptions(cs, ebpf.CollectionOptions{Cache: kernel.SpecCache()})
	if err != nil {
		return nil, false
	}
	for _, p := range byID {
		prog, err := loadByKernelTypeID(p, coll.Maps, ids)
		if err != nil {
			coll.Close()
			return nil, false
		}
		if coll.Programs == nil {
			coll.Programs = map[string]*ebpf.Program{}
		}
		coll.Programs[p.Name] = prog
	}
	return coll, true
}

func hasKernelTypeID(ids KernelTypeIDs, name string, typ any) bool {
	_, ok := ids.KernelTypeID(name, typ)
	return ok
}

func translateLoadError(out *codegen.Output, err error, verbose bool) error {
	var ve *ebpf.VerifierError
	if merr := explainMemlock(out, err); merr != nil {
		return merr
	}
	switch {
	case errors.Is(err, unix.EMFILE):
		// cilium/ebpf reports it as a verifier error, with the log.
		return explainEMFILE(out, fmt.Errorf("load: %w", unix.EMFILE))
	case errors.Is(err, unix.ENOMEM) && !errors.As(err, &ve):
		return fmt.Errorf("the kernel could not allocate the script's %s maps and %s programs (the maps alone need about %s KiB): %w", thousands(len(out.Maps)), thousands(len(out.Programs)), thousands(int(mapsBytes(out)>>10)), err)
	case errors.As(err, &ve) && errors.Is(err, unix.EACCES):
		// The verifier refuses a program with EACCES: not a permission.
		return verifierError(ve, verbose)
	case errors.Is(err, os.ErrPermission) && os.Geteuid() == 0:
		for _, p := range out.Programs {
			if p.Prog.AttachType == ebpf.AttachTraceFEntry || p.Prog.AttachType == ebpf.AttachTraceFExit {
				return fmt.Errorf("this kernel refuses fentry/fexit programs even to root (kernel lockdown or a BPF LSM policy); use tracepoint: or kprobe: instead")
			}
		}
		return fmt.Errorf("the kernel refused to load the programs even to root (kernel lockdown or a BPF LSM policy): %w", err)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("the kernel refused to load eBPF programs: run skbtrace as root (it needs CAP_BPF and CAP_PERFMON)")
	case errors.As(err, &ve):
		return verifierError(ve, verbose)
	case errors.Is(err, ebpf.ErrNotSupported):
		return fmt.Errorf("this kernel lacks a feature the script needs: %v", err)
	}
	return fmt.Errorf("load: %w", err)
}

// verifierError says why the verifier refused a program: its last line,
// or the whole log with verbose.
func verifierError(ve *ebpf.VerifierError, verbose bool) error {
	if verbose {
		return fmt.Errorf("the kernel's verifier rejected the program:\n%+v", ve)
	}
	if strings.Contains(strings.Join(ve.Log, "\n"), "BPF program is too large") {
		return fmt.Errorf("program too large: the kernel's verifier gave up after 1,000,000 instructions; split the probe into smaller probes")
	}
	// The verifier's reason is its last line before the statistics.
	last := ""
	for i := len(ve.Log) - 1; i >= 0; i-- {
		l := strings.TrimSpace(ve.Log[i])
		if l != "" && !strings.HasPrefix(l, "processed ") && !strings.HasPrefix(l, "verification time") && !strings.HasPrefix(l, "stack depth") {
			last = l
			break
		}
	}
	if helper, ok := unknownHelper(last); ok {
		return fmt.Errorf("this kernel lacks the BPF helper %s, which the script's code calls (the verifier: %s); a newer kernel has it, and skbtrace should not have called it here: please report it with the output of -v", helper, last)
	}
	return fmt.Errorf("the kernel's verifier rejected the program (%s); this is a bug in skbtrace's code generation, please report it with the output of -v", last)
}

// Verified reports how many instructions the verifier processed for each
// loaded program, by program name.
func Verified(coll *ebpf.Collection) map[string]uint32 {
	out := map[string]uint32{}
	for name, p := range coll.Programs {
		if info, err := p.Info(); err == nil {
			if n, ok := info.VerifiedInstructions(); ok {
				out[name] = n
			}
		}
	}
	return out
}

// LoadShared loads one program of a script after the rest, sharing the
// maps of the loaded collection: track()'s helpers, fentry programs.
func LoadShared(coll *ebpf.Collection, p *codegen.Program) (*ebpf.Program, error) {
	cs := &ebpf.CollectionSpec{Programs: map[string]*ebpf.ProgramSpec{p.Name: p.Prog}, Maps: map[string]*ebpf.MapSpec{}}
	repl := map[string]*ebpf.Map{}
	for _, ins := range p.Prog.Instructions {
		if ref := ins.Reference(); ref != "" && coll.Maps[ref] != nil {
			repl[ref] = coll.Maps[ref]
			cs.Maps[ref] = &ebpf.MapSpec{Name: ref}
		}
	}
	for name, m := range repl {
		info, err := m.Info()
		if err != nil {
			return nil, err
		}
		cs.Maps[name] = &ebpf.MapSpec{Name: name, Type: info.Type, KeySize: info.KeySize, ValueSize: info.ValueSize, MaxEntries: info.MaxEntries, Flags: info.Flags}
	}
	h, err := ebpf.NewCollectionWithOptions(cs, ebpf.CollectionOptions{MapReplacements: repl, Cache: kernel.SpecCache()})
	if err != nil {
		return nil, err
	}
	prog := h.DetachProgram(p.Name)
	h.Close()
	return prog, nil
}

// unknownHelper names the helper of the verifier's "invalid func
// unknown#173": a kernel older than the helper.
func unknownHelper(line string) (string, bool) {
	_, num, ok := strings.Cut(line, "invalid func unknown#")
	if !ok {
		return "", false
	}
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if err != nil {
		return "", false
	}
	camel, ok := strings.CutPrefix(asm.BuiltinFunc(n).String(), "Fn")
	if !ok {
		return fmt.Sprintf("#%d", n), true
	}
	// FnGetFuncIp is the kernel's bpf_get_func_ip.
	var b strings.Builder
	b.WriteString("bpf")
	for _, r := range camel {
		if unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return fmt.Sprintf("%s (#%d)", b.String(), n), true
}
