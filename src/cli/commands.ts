// The subcommands of `sluice`, each loaded only when asked for: main.ts runs
// them, `sluice help` lists their summaries, and docs/cli.md is generated from
// this list (scripts/gen-cli-docs.ts), so a new command cannot go undocumented.
import type { Command } from './command.js';

export const COMMANDS: Record<string, () => Promise<Command>> = {
  start: async () => (await import('./start.js')).command,
  check: async () => (await import('./check.js')).command,
  explain: async () => (await import('./explain-command.js')).command,
  migrate: async () => ({ summary: 'apply the rule store migrations to SLUICE_DATABASE_URL', run: (await import('./migrate.js')).run }),
  rules: async () => ({ summary: 'list|get|set|delete|import|export rules through the admin API', run: (await import('./rules-command.js')).run }),
  overrides: async () => ({ summary: 'list|set|delete per-key overrides of limits through the admin API', run: (await import('./overrides-command.js')).run }),
  plans: async () => ({ summary: 'list|show|create|set-limit|delete|assign|unassign plans through the admin API', run: (await import('./plans-command.js')).run }),
  lists: async () => ({ summary: 'list|add|remove allow and deny list entries through the admin API', run: (await import('./lists-command.js')).run }),
  reload: async () => ({ summary: "re-read the running gateway's config file (like SIGHUP) through the admin API", run: (await import('./reload-command.js')).run }),
  ratelimit: async () => (await import('./ratelimit-command.js')).command,
  blocks: async () => ({ summary: "list|lift the keys a limit's penalty box blocks, through the admin API", run: (await import('./blocks-command.js')).run }),
  keys: async () => ({ summary: 'create|list|revoke API keys through the admin API', run: (await import('./keys-command.js')).run }),
  tokens: async () => ({ summary: 'create|list|revoke named admin tokens (read, write, admin) through the admin API', run: (await import('./tokens-command.js')).run }),
  usage: async () => ({ summary: "a tenant's limits: what is left, when each resets, its last hour's and day's consumption", run: (await import('./usage-command.js')).run }),
  audit: async () => ({ summary: 'export the audit log of every change (--since, --format json|csv) through the admin API', run: (await import('./audit-command.js')).run }),
};
