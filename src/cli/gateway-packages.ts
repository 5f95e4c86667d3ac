// `npm install sluice` installs the library alone: the gateway's own packages
// (gRPC, PostgreSQL, SQLite, the proxy's HTTP client, YAML, the dashboard's
// charts) are optional peer dependencies (docs/library.md#install). A command
// that needs one that is missing says what to install, instead of Node's bare
// "Cannot find package".
import { readFileSync } from 'node:fs';

/** The adapters' peers: an app's own choice, never needed by the `sluice` command. */
const ADAPTER_PEERS = new Set(['express', 'fastify']);
/** Needed only with tracing on (tracing/load.ts says what to install then). */
const isTracingPeer = (name: string): boolean => name.startsWith('@opentelemetry/');

function resolvable(name: string): boolean {
  try {
    import.meta.resolve(name);
    return true;
  } catch {
    return false;
  }
}

/** `npm install …` of the gateway's packages that cannot be found from here, or undefined when none is missing. */
export function missingGatewayInstall(): string | undefined {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { peerDependencies?: Record<string, string> };
  const missing = Object.entries(manifest.peerDependencies ?? {}).filter(([name]) => !ADAPTER_PEERS.has(name) && !isTracingPeer(name) && !resolvable(name));
  return missing.length === 0 ? undefined : `npm install ${missing.map(([name, range]) => `'${name}@${range}'`).join(' ')}`;
}

/** The CLI's message for a failure that is a missing gateway package, else undefined. */
export function missingPackageMessage(error: unknown): string | undefined {
  if ((error as { code?: unknown } | null)?.code !== 'ERR_MODULE_NOT_FOUND') return undefined;
  const install = missingGatewayInstall();
  if (install === undefined) return undefined;
  return `the gateway needs packages that \`npm install sluice\` leaves out (the library alone needs none of them): ${(error as Error).message}\ninstall them beside sluice:\n  ${install}`;
}
