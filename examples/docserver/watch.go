package docserver

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/a2c-smcp/smcp-go/dpekit"
)

// Watch reports changes of the folder until ctx ends (dpekit.Watcher): a
// new file (also one inside a new folder) is DocumentAdded, a deleted or
// renamed one DocumentRemoved, an edited one DocumentUpdated. Events are
// debounced per path: a file is looked at once it has been quiet for the
// debounce interval, so an editor's burst of writes is one change, and a
// temporary file created and renamed away within the interval is none.
// Watch closes the Library when it returns.
func (l *Library) Watch(ctx context.Context, emit func(dpekit.Change)) error {
	defer l.Close()
	if l.watcher == nil {
		<-ctx.Done()
		return nil
	}
	pending := map[string]time.Time{}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	armed := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-l.watcher.Events:
			if !ok {
				return nil
			}
			pending[ev.Name] = time.Now()
			if !armed {
				timer.Reset(l.cfg.debounce)
				armed = true
			}
		case err, ok := <-l.watcher.Errors:
			if !ok {
				return nil
			}
			l.log.Warn("docserver: file watcher", "err", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost: look at the whole folder again.
				pending[l.root] = time.Now()
				if !armed {
					timer.Reset(l.cfg.debounce)
					armed = true
				}
			}
		case now := <-timer.C:
			armed = false
			next := time.Duration(-1)
			for p, t := range pending {
				if wait := l.cfg.debounce - now.Sub(t); wait > 0 {
					if next < 0 || wait < next {
						next = wait
					}
					continue
				}
				delete(pending, p)
				l.apply(p, emit)
			}
			if next >= 0 {
				timer.Reset(next)
				armed = true
			}
		}
	}
}

// apply looks at one changed path and reports what it finds.
func (l *Library) apply(abs string, emit func(dpekit.Change)) {
	rel, err := filepath.Rel(l.root, abs)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return
	}
	local := rel
	rel = filepath.ToSlash(rel)
	if rel != "." {
		for _, seg := range strings.Split(rel, "/") {
			if ignored(seg) {
				return
			}
		}
	}
	// Through the folder's os.Root: a link leading outside reads as gone.
	fi, err := l.fs.Stat(local)
	if err != nil {
		for _, ref := range l.untrack(rel) {
			emit(dpekit.Change{Kind: dpekit.DocumentRemoved, DocRef: ref})
		}
		return
	}
	if fi.IsDir() {
		if rel == "." {
			l.rescan(emit)
			return
		}
		added, err := l.scan(abs)
		if err != nil {
			l.log.Warn("docserver: cannot read", "path", rel, "err", err)
		}
		for _, ref := range added {
			emit(dpekit.Change{Kind: dpekit.DocumentAdded, DocRef: ref})
		}
		return
	}
	if ref, ok := l.track(abs); ok {
		emit(dpekit.Change{Kind: dpekit.DocumentAdded, DocRef: ref})
		return
	}
	l.mu.RLock()
	e := l.byPath[rel]
	l.mu.RUnlock()
	if e == nil {
		return
	}
	e.mu.Lock()
	same := e.loaded && e.stamp == stampOf(fi)
	e.mu.Unlock()
	if !same {
		emit(dpekit.Change{Kind: dpekit.DocumentUpdated, DocRef: e.ref})
	}
}

// rescan compares the whole folder with what is tracked, after the watcher
// lost events.
func (l *Library) rescan(emit func(dpekit.Change)) {
	l.mu.RLock()
	var rels []string
	for rel := range l.byPath {
		rels = append(rels, rel)
	}
	l.mu.RUnlock()
	for _, rel := range rels {
		l.apply(filepath.Join(l.root, filepath.FromSlash(rel)), emit)
	}
	added, _ := l.scan(l.root)
	for _, ref := range added {
		emit(dpekit.Change{Kind: dpekit.DocumentAdded, DocRef: ref})
	}
}
