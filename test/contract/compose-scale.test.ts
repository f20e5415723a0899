/**
 * compose.scale.yaml and its load balancer's configuration, read as data (no Docker engine runs here): the
 * services the README's "Running N instances" names, what each instance is given, a data volume of each
 * instance's own, one pepper secret for all, and a load balancer that names every instance on its port.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT } from '../helpers/spawn-server.js';

interface Service {
  image?: string;
  build?: string;
  environment?: Record<string, string>;
  volumes?: string[];
  secrets?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }> | string[];
}

interface ComposeFile {
  services: Record<string, Service>;
  secrets: Record<string, { file: string }>;
  volumes: Record<string, unknown>;
}

const compose = parse(readFileSync(path.join(ROOT, 'compose.scale.yaml'), 'utf8'), { merge: true }) as ComposeFile;
const nginx = readFileSync(path.join(ROOT, 'deploy/scale/nginx.conf'), 'utf8');
const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const sectionStart = readme.indexOf('### Running N instances');
/** The README's section, up to the next top-level heading. */
const section = readme.slice(sectionStart, readme.indexOf('\n## ', sectionStart));
const INSTANCES = ['omnigate-a', 'omnigate-b'];
/** The port the image listens on (Dockerfile `ENV PORT=8080`). */
const IMAGE_PORT = /ENV [^\n]*PORT=(\d+)/.exec(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'))![1];

describe('compose.scale.yaml', () => {
  it('runs two instances, PostgreSQL, Redis, an S3-compatible store and a load balancer', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      [...INSTANCES, 'load-balancer', 'minio', 'minio-bucket', 'postgres', 'redis'].sort(),
    );
    expect(compose.services.postgres.image).toMatch(/^postgres:\d+/);
    expect(compose.services.redis.image).toMatch(/^redis:\d+/);
    expect(compose.services['load-balancer'].image).toMatch(/^nginx:/);
    expect(compose.services['load-balancer'].ports).toEqual([`127.0.0.1:8080:${IMAGE_PORT}`]);
  });

  it.each(INSTANCES)('gives %s the shared stores, the shared pepper and a data volume of its own', (name) => {
    const service = compose.services[name];
    expect(service.build).toBe('.');
    const env = service.environment!;
    expect(env.OMNIGATE_DATABASE_URL).toMatch(
      /^postgres:\/\/omnigate:\$\{POSTGRES_PASSWORD[^}]*\}@postgres:5432\/omnigate$/,
    );
    expect(env.OMNIGATE_REDIS_URL).toBe('redis://redis:6379');
    expect(env.OMNIGATE_BLOB_URL).toMatch(/^s3:\/\/[a-z0-9-]+\/\w+/);
    expect(env.AWS_ENDPOINT_URL).toBe('http://minio:9000');
    expect(env.OMNIGATE_PEPPER_FILE).toBe('/run/secrets/omnigate-pepper');
    expect(service.secrets).toEqual(['omnigate-pepper']);
    expect(service.volumes).toEqual([`${name}-data:/data`]);
    expect(compose.volumes).toHaveProperty(`${name}-data`);
    expect(service.depends_on).toMatchObject({
      postgres: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
      'minio-bucket': { condition: 'service_completed_successfully' },
    });
    // The bucket the job makes is the one the blob URL names.
    const bucket = /^s3:\/\/([^/]+)/.exec(env.OMNIGATE_BLOB_URL)![1];
    expect(JSON.stringify(compose.services['minio-bucket'])).toContain(`mc mb --ignore-existing store/${bucket}`);
    // Every variable the instance is given is one the README's section explains.
    for (const variable of Object.keys(env)) {
      expect(section, variable).toContain(`\`${variable}\``);
    }
  });

  it('shares one pepper file, the one the README tells how to make', () => {
    expect(compose.secrets).toEqual({ 'omnigate-pepper': { file: './omnigate.pepper' } });
    expect(section).toContain('openssl rand -hex 32 > omnigate.pepper');
  });

  it('balances over every instance, on the port the image listens on', () => {
    const servers = [...nginx.matchAll(/^\s*server ([\w-]+):(\d+)\b/gm)].map((match) => `${match[1]}:${match[2]}`);
    expect(servers).toEqual(INSTANCES.map((name) => `${name}:${IMAGE_PORT}`));
    expect(nginx).toMatch(/proxy_buffering off;/);
    expect(nginx).toMatch(/proxy_request_buffering off;/);
    const mounted = compose.services['load-balancer'].volumes!;
    expect(mounted).toEqual(['./deploy/scale/nginx.conf:/etc/nginx/conf.d/default.conf:ro']);
  });
});
