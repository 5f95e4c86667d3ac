// A fresh project as `npm install <tarball>` lays it out, built without the
// network: the tarball unpacked into node_modules/sluice, then every package
// npm would install for it, found the way npm and Node resolve (the nearest
// node_modules up from the package that depends on it) in this checkout's
// package-lock.json and copied from this checkout's node_modules. Nothing else
// is there, so a package the library loads without declaring it fails the
// tests, and the tree can be checked for what it must not hold.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURES = join(import.meta.dirname, 'packed');

interface LockEntry {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  hasInstallScript?: boolean;
}

export interface Manifest extends LockEntry {
  name: string;
}

const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };

export function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  assert.equal(result.status, 0, `${command} ${args.join(' ')}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** What npm installs for a package: its dependencies, optional ones, and the peers not marked optional. */
function installedFor(entry: LockEntry): string[] {
  const peers = Object.keys(entry.peerDependencies ?? {}).filter((name) => !entry.peerDependenciesMeta?.[name]?.optional);
  return [...Object.keys(entry.dependencies ?? {}), ...Object.keys(entry.optionalDependencies ?? {}), ...peers];
}

/** The lock path `name` resolves to from the package at lock path `from` ('' = the project). */
function resolveIn(from: string, name: string): string | undefined {
  for (let at = from; ; at = at.slice(0, Math.max(0, at.lastIndexOf('/node_modules/')))) {
    const path = `${at === '' ? '' : `${at}/`}node_modules/${name}`;
    if (lock.packages[path]) return path;
    if (at === '') return undefined;
  }
}

/** The lock paths of `names` (needed by the project) and of everything they need in turn. */
export function treeOf(names: string[]): Set<string> {
  const tree = new Set<string>();
  const visit = (from: string, name: string) => {
    const path = resolveIn(from, name);
    if (path === undefined || tree.has(path)) return; // an optional dependency for another platform
    tree.add(path);
    for (const next of installedFor(lock.packages[path]!)) visit(path, next);
  };
  for (const name of names) visit('', name);
  return tree;
}

/** The packed tarball's manifest and the tree npm installs for it (its lock paths), in a new project under `dir`. */
export function packedProject(dir: string, appPackages: string[]): { cwd: string; manifest: Manifest; libraryTree: Set<string> } {
  const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', dir], ROOT)) as { filename: string }[];
  const cwd = join(dir, 'project');
  const modules = join(cwd, 'node_modules');
  mkdirSync(modules, { recursive: true });
  run('tar', ['-xzf', join(dir, packed[0]!.filename), '-C', modules], dir);
  renameSync(join(modules, 'package'), join(modules, 'sluice'));
  const manifest = JSON.parse(readFileSync(join(modules, 'sluice', 'package.json'), 'utf8')) as Manifest;
  const libraryTree = treeOf(installedFor(manifest));
  // Parents before the packages nested in them, each copied without its own node_modules.
  for (const path of [...new Set([...libraryTree, ...treeOf(appPackages)])].sort((a, b) => a.length - b.length)) {
    mkdirSync(dirname(join(cwd, path)), { recursive: true });
    run('cp', ['-R', join(ROOT, path), join(cwd, path)], cwd);
    rmSync(join(cwd, path, 'node_modules'), { recursive: true, force: true });
  }
  writeFileSync(join(cwd, 'package.json'), '{ "name": "probe", "version": "1.0.0", "private": true }\n');
  for (const file of readdirSync(FIXTURES)) copyFileSync(join(FIXTURES, file), join(cwd, file));
  return { cwd, manifest, libraryTree };
}

/** The installed packages' names (`@scope/name` or `name`), at any depth, from their lock paths. */
export function namesOf(tree: Set<string>): Set<string> {
  return new Set([...tree].map((path) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)));
}

/** Whether the package at lock path `path` runs an install script (a native build, a download). */
export function buildsOnInstall(path: string): boolean {
  return lock.packages[path]?.hasInstallScript === true;
}

export const hasPackage = (cwd: string, name: string) => existsSync(join(cwd, 'node_modules', name, 'package.json'));
