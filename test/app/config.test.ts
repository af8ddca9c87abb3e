import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../app/config.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('configuration', () => {
  it('applies defaults and converts types', () => {
    const config = loadConfig({ NODE_ENV: 'test', SECRET_KEY: 'k'.repeat(32), PORT: '8080', SEED_DEMO: 'false' });
    expect(config).toMatchObject({ port: 8080, seedDemo: false, baseDomain: 'localhost', accessTokenTtlSeconds: 900, databaseUrl: undefined });
  });

  it('names the variable that is wrong', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x', SECRET_KEY: 'k'.repeat(32) })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/SECRET_KEY/);
  });

  it('keeps loopback webhook targets off by default and refuses to turn them on in production', () => {
    expect(loadConfig({ NODE_ENV: 'test', SECRET_KEY: 'k'.repeat(32) }).webhookAllowLoopback).toBe(false);
    expect(loadConfig({ NODE_ENV: 'test', SECRET_KEY: 'k'.repeat(32), WEBHOOK_ALLOW_LOOPBACK: 'true' }).webhookAllowLoopback).toBe(true);
    const production = { NODE_ENV: 'production', SECRET_KEY: 'k'.repeat(32), WEBHOOK_ALLOW_LOOPBACK: 'true' };
    expect(() => loadConfig(production)).toThrow(ConfigError);
    expect(() => loadConfig(production)).toThrow(/WEBHOOK_ALLOW_LOOPBACK/);
    expect(loadConfig({ ...production, WEBHOOK_ALLOW_LOOPBACK: 'false' }).webhookAllowLoopback).toBe(false);
  });

  it('builds the public origin from the domain and port unless PUBLIC_URL names one; OAuth token URLs are replaced in tests only', () => {
    const base = { NODE_ENV: 'test', SECRET_KEY: 'k'.repeat(32) };
    expect(loadConfig({ ...base, BASE_DOMAIN: 'dispatch.test', PORT: '8080' }).publicUrl).toBe('http://{site}.dispatch.test:8080');
    // In production the sites are behind TLS on the standard port.
    expect(loadConfig({ ...base, NODE_ENV: 'production', BASE_DOMAIN: 'dispatch.example', PORT: '8080' }).publicUrl).toBe('https://{site}.dispatch.example');
    const proxied = loadConfig({ ...base, PUBLIC_URL: 'https://{site}.dispatch.example' });
    expect([proxied.publicUrl, proxied.attachments.publicUrl]).toEqual(['https://{site}.dispatch.example', 'https://{site}.dispatch.example']);
    expect(() => loadConfig({ ...base, PUBLIC_URL: 'https://dispatch.example' })).toThrow(/PUBLIC_URL/);
    expect(loadConfig({ ...base, OAUTH_TOKEN_URLS: '{"slack":"http://127.0.0.1:9/token"}' }).oauthTokenUrls).toEqual({ slack: 'http://127.0.0.1:9/token' });
    expect(() => loadConfig({ ...base, OAUTH_TOKEN_URLS: '{"slack":"ftp://x"}' })).toThrow(/OAUTH_TOKEN_URLS/);
    expect(() => loadConfig({ ...base, NODE_ENV: 'production', OAUTH_TOKEN_URLS: '{"slack":"http://127.0.0.1:9/token"}' })).toThrow(/OAUTH_TOKEN_URLS/);
  });

  it('stops the server start with that message and a non-zero exit', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'main.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, ACCESS_TOKEN_TTL_SECONDS: '5' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('Invalid environment variable ACCESS_TOKEN_TTL_SECONDS');
  });
});
