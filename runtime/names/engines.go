package names

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// engineNames reads container names from root podman's and docker's stores,
// for hosts that run containers without Kubernetes. Each store is read only
// when it changed since the last read.
type engineNames struct {
	podmanRoot, dockerRoot string

	podmanStamp map[string]fileStamp // containers.json → its size and mtime when read
	podman      map[string]string    // container ID → name
	docker      map[string]dockerEntry
}

// fileStamp tells whether a file changed since it was read.
type fileStamp struct {
	size int64
	mod  time.Time
}

// dockerEntry is one docker container's name, with its config's stamp.
type dockerEntry struct {
	name  string
	stamp fileStamp
}

// readPodman reads the names of podman's containers from each storage
// driver's containers.json (overlay-containers/containers.json for overlay):
// every container podman created, running or not. It returns the
// containers' count and what went wrong, nil where podman's store is absent.
func (e *engineNames) readPodman() (int, error) {
	files, _ := filepath.Glob(filepath.Join(e.podmanRoot, "*-containers", "containers.json"))
	if e.podmanStamp == nil {
		e.podmanStamp = map[string]fileStamp{}
	}
	changed := len(files) != len(e.podmanStamp)
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return 0, fmt.Errorf("reading podman's containers: %w", err)
		}
		if e.podmanStamp[f] != (fileStamp{fi.Size(), fi.ModTime()}) {
			changed = true
		}
	}
	if !changed {
		return len(e.podman), nil
	}
	e.podman, e.podmanStamp = map[string]string{}, map[string]fileStamp{}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return 0, fmt.Errorf("reading podman's containers: %w", err)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return 0, fmt.Errorf("reading podman's containers: %w", err)
		}
		var list []struct {
			ID    string   `json:"id"`
			Names []string `json:"names"`
		}
		if err := json.Unmarshal(b, &list); err != nil {
			return 0, fmt.Errorf("reading podman's containers from %s: %w", f, err)
		}
		for _, c := range list {
			if len(c.Names) > 0 {
				e.podman[c.ID] = c.Names[0]
			}
		}
		e.podmanStamp[f] = fileStamp{fi.Size(), fi.ModTime()}
	}
	return len(e.podman), nil
}

// readDocker reads the names of the docker containers among ids from
// DOCKER_ROOT/containers/ID/config.v2.json ("Name": "/web"), rereading a
// config only when it changed (a rename). It forgets containers not in ids.
// It returns how many it named.
func (e *engineNames) readDocker(ids []string) (int, error) {
	if _, err := os.Stat(filepath.Join(e.dockerRoot, "containers")); err != nil {
		e.docker = nil
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, fmt.Errorf("reading docker's containers: %w", err)
	}
	next := make(map[string]dockerEntry, len(ids))
	var firstErr error
	for _, id := range ids {
		f := filepath.Join(e.dockerRoot, "containers", id, "config.v2.json")
		fi, err := os.Stat(f)
		if err != nil {
			continue // not docker's
		}
		stamp := fileStamp{fi.Size(), fi.ModTime()}
		if old, ok := e.docker[id]; ok && old.stamp == stamp {
			next[id] = old
			continue
		}
		b, err := os.ReadFile(f)
		var cfg struct{ Name string }
		if err == nil {
			err = json.Unmarshal(b, &cfg)
		}
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("reading docker container %s's name: %w", shortID(id), err)
			}
			continue
		}
		next[id] = dockerEntry{strings.TrimPrefix(cfg.Name, "/"), stamp}
	}
	e.docker = next
	return len(next), firstErr
}

// name returns the podman or docker name of a container and its runtime.
func (e *engineNames) name(id string) (name, runtime string, ok bool) {
	if n, ok := e.podman[id]; ok {
		return n, "podman", true
	}
	if d, ok := e.docker[id]; ok {
		return d.name, "docker", true
	}
	return "", "", false
}
