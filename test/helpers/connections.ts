// Shared by the connection tests: the ACL line docs/redis.md documents (read
// from the page, so the tested ACL is the documented one), a config built
// from YAML in a folder of its own, and `sluice check --connect` as a child.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SluiceConfig } from '../../src/config/index.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { sluiceCli } from '../helpers/cli.js';

/** `ACL SETUSER sluice …` from docs/redis.md, as arguments after `ACL`, with `password` for CHANGE-ME. */
export function documentedAcl(password: string, user = 'sluice'): string[] {
  const line = readFileSync('docs/redis.md', 'utf8').split('\n').find((text) => text.startsWith('ACL SETUSER sluice '));
  if (!line) throw new Error('docs/redis.md has no ACL SETUSER sluice line');
  const args = line.split(' ').slice(1);
  args[1] = user;
  return args.map((arg) => (arg === '>CHANGE-ME' ? `>${password}` : arg));
}

/** A config whose relative paths (certificates, password files) are taken from `dir`, as `sluice start --config dir/sluice.yaml` would. */
export function configIn(dir: string, yaml: string): SluiceConfig {
  return parseConfig(yaml, { source: join(dir, 'sluice.yaml'), baseDir: dir, env: { SLUICE_LISTEN: '127.0.0.1:0' } });
}

/** Runs `sluice check --config FILE --connect`; resolves with its exit code and output. */
export function checkConnect(dir: string, yaml: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const file = join(dir, 'check.yaml');
  writeFileSync(file, yaml);
  const child = spawn(process.execPath, [...sluiceCli(), 'check', '--config', file, '--connect'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

export const ROUTES = `routes:
  - id: orders
    path: /orders
    upstream: http://127.0.0.1:9
`;
