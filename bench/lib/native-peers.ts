// nginx `limit_req` and HAProxy stick tables as reference gateways, only when
// their binaries are installed (the bench never installs them). Each runs as
// one process, one worker, in front of the same upstream, with a limit so
// large nothing is refused.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Child, spawnServer } from './children.js';
import { onCleanup } from './cleanup.js';
import { freePort } from '../../test/helpers/ports.js';

export function binaryExists(name: string): boolean {
  for (const dir of ['/usr/sbin', '/usr/bin', '/usr/local/sbin', '/usr/local/bin']) {
    try {
      execFileSync(join(dir, name), ['-v'], { stdio: 'ignore' });
      return true;
    } catch {
      // try the next directory
    }
  }
  return false;
}

export function workDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export const NGINX_PLAIN = 'nginx plain proxy';

/** nginx as one worker process, with `limit_req` (per instance only) or as a plain proxy; with `tls`, HTTPS only (HTTP/2 and HTTP/1.1 by ALPN). */
export async function startNginx(upstream: string, limitReq = true, tls?: { cert: string; key: string; name: string }): Promise<Child> {
  const dir = workDir();
  const port = await freePort();
  const up = new URL(upstream);
  const conf = `daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log error;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  limit_req_zone $http_x_api_key zone=api:10m rate=1000000r/s;
  upstream up { server ${up.hostname}:${up.port}; keepalive 64; }
  server {
    listen 127.0.0.1:${port}${tls ? ` ssl http2;\n    ssl_certificate ${tls.cert};\n    ssl_certificate_key ${tls.key};\n    ssl_protocols TLSv1.2 TLSv1.3` : ''};
    location / {
${limitReq ? '      limit_req zone=api burst=1000000 nodelay;\n      limit_req_status 429;\n' : ''}      proxy_pass http://up;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`;
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const child = await spawnServer(tls?.name ?? (limitReq ? 'nginx limit_req' : NGINX_PLAIN), 'nginx', ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], port);
  return tls ? { ...child, url: child.url.replace(/^http:/, 'https:') } : child;
}

export async function startHaproxy(upstream: string): Promise<Child> {
  const dir = workDir();
  const port = await freePort();
  const up = new URL(upstream);
  const conf = `global
  maxconn 4000
  nbthread 1
defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s
frontend gateway
  bind 127.0.0.1:${port}
  stick-table type string len 64 size 100k expire 10s store http_req_rate(1s)
  http-request track-sc0 req.hdr(x-api-key)
  http-request deny deny_status 429 if { sc_http_req_rate(0) gt 1000000000 }
  default_backend upstream
backend upstream
  http-reuse always
  server up ${up.hostname}:${up.port}
`;
  writeFileSync(join(dir, 'haproxy.cfg'), conf);
  return spawnServer('HAProxy stick table', 'haproxy', ['-f', join(dir, 'haproxy.cfg'), '-db'], port);
}
