// Copies the Lua twins next to the compiled models, Envoy's .proto files for the
// decision service (src/decision-service/proto, loaded at runtime), and the dashboard's
// page (src/dashboard/ui: HTML, CSS, browser JS, no build step), so dist/ runs without src/.
import { cpSync, readdirSync, statSync, mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith('.lua') || name.endsWith('.proto') || dir.endsWith(join('dashboard', 'ui'))) {
      const target = join('dist', path.slice('src/'.length));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(path, target);
    }
  }
}
walk('src');
