// Reloads the config folder when it changes, as the reference's runtime does:
// a file written, created, removed or renamed in the folder (an in-place edit,
// or Kubernetes swapping a ConfigMap's `..data` symlink), and with
// RUNTIME_WATCH_ROOT the RUNTIME_ROOT symlink itself swapped. Events are
// gathered for a moment, then the folder is watched afresh (after a swap its
// path names another directory) and reloaded once.
import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Logger } from 'pino';

export interface FolderWatchOptions {
  configDir: string;
  runtimeRoot: string;
  watchRoot: boolean;
  /** Called once per burst of changes. */
  reload: () => void;
  logger: Logger;
  /** How long a burst of events is gathered before the reload. */
  settleMs?: number;
}

export class FolderWatcher {
  private dirWatcher: FSWatcher | undefined;
  private rootWatcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: FolderWatchOptions) {}

  start(): void {
    this.watchFolder();
    if (this.options.watchRoot) {
      const rootName = basename(this.options.runtimeRoot);
      this.rootWatcher = this.watchPath(dirname(this.options.runtimeRoot), (name) => name === null || name === rootName);
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.dirWatcher?.close();
    this.rootWatcher?.close();
  }

  private watchFolder(): void {
    this.dirWatcher?.close();
    this.dirWatcher = this.watchPath(this.options.configDir, () => true);
  }

  /** A watcher on `path` for the names `wanted` accepts; undefined (logged) when the path cannot be watched now. */
  private watchPath(path: string, wanted: (name: string | null) => boolean): FSWatcher | undefined {
    try {
      const watcher = watch(path, { persistent: false }, (_event, name) => {
        if (wanted(name === null ? null : String(name))) this.changed();
      });
      // The folder removed or replaced: watched again at the next change seen, or reload.
      watcher.on('error', () => {
        watcher.close();
        this.changed();
      });
      return watcher;
    } catch (error) {
      this.options.logger.warn({ path, err: (error as Error).message }, 'cannot watch the config folder for changes');
      return undefined;
    }
  }

  private changed(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (this.closed) return;
      this.watchFolder();
      this.options.reload();
    }, this.options.settleMs ?? 100);
  }
}
