import { ConfigError, loadConfig } from '../../src/config';

describe('quota settings (docs/conventions.md "Quotas")', () => {
  test('the defaults leave the default port range to ten accounts at their full servers quota', () => {
    const config = loadConfig({});
    expect(config.quotas).toEqual({ servers: 10, running: 5, memory_mb: 8192 });
    const [low, high] = config.gamePortRange;
    expect(high - low + 1).toBeGreaterThanOrEqual(10 * config.quotas.servers);
    expect(config.quotas.running).toBeLessThanOrEqual(config.quotas.servers);
  });

  test.each([
    ['QUOTA_SERVERS', '0', { servers: 0 }],
    ['QUOTA_RUNNING_SERVERS', '2', { running: 2 }],
    ['QUOTA_MEMORY_MB', '65536', { memory_mb: 65536 }],
    ['QUOTA_SERVERS', '', { servers: 10 }],
  ])('%s=%j', (name, value, want) => {
    expect(loadConfig({ [name]: value }).quotas).toMatchObject(want);
  });

  test.each([
    ['QUOTA_SERVERS', '-1'],
    ['QUOTA_RUNNING_SERVERS', 'many'],
    ['QUOTA_MEMORY_MB', '1.5'],
    ['QUOTA_MEMORY_MB', '1000000001'],
  ])('%s=%j is refused at start', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  });
});

describe('metrics settings (README "Metrics")', () => {
  const token = 'a'.repeat(32);
  test.each([
    ['off by default', {}, { port: null, host: '127.0.0.1', token: null }],
    ['a port of its own', { METRICS_PORT: '9464' }, { port: 9464, host: '127.0.0.1', token: null }],
    ['on another address', { METRICS_PORT: '9464', METRICS_HOST: '10.0.0.5' }, { port: 9464, host: '10.0.0.5', token: null }],
    ['behind a token on the main port', { METRICS_TOKEN: token }, { port: null, host: '127.0.0.1', token }],
  ])('%s', (_name, env, want) => {
    expect(loadConfig(env).prometheus).toEqual(want);
  });

  test.each([
    ['METRICS_PORT', 'nine', /METRICS_PORT must be a whole number from 0 to 65535/],
    ['METRICS_PORT', '70000', /METRICS_PORT must be a whole number/],
    ['METRICS_TOKEN', 'short-secret', /METRICS_TOKEN must be 32 to 200 visible ASCII characters/],
    ['METRICS_TOKEN', `${'a'.repeat(32)} b`, /METRICS_TOKEN must be/],
  ])('%s=%j is refused at start, clearly and without echoing a secret', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(message);
    if (name === 'METRICS_TOKEN') expect(() => loadConfig({ [name]: value })).not.toThrow(value);
  });
});

describe('password hashing cost (PASSWORD_SCRYPT_N, SECURITY.md)', () => {
  test.each([
    ['left out: OWASP\'s minimum', {}, 2 ** 17],
    ['raised', { PASSWORD_SCRYPT_N: '262144' }, 2 ** 18],
    ['lowered in tests', { PASSWORD_SCRYPT_N: '1024', NODE_ENV: 'test' }, 2 ** 10],
  ])('%s', (_name, env, N) => {
    expect(loadConfig(env).dashboard.passwordCost).toEqual({ N, r: 8, p: 1 });
  });

  test.each([
    ['lowered outside tests', { PASSWORD_SCRYPT_N: '1024' }, /only in tests/],
    ['lowered in production', { PASSWORD_SCRYPT_N: '65536', NODE_ENV: 'production' }, /only in tests/],
    ['not a power of two', { PASSWORD_SCRYPT_N: '100000', NODE_ENV: 'test' }, /power of two/],
    ['below the lowest, even in tests', { PASSWORD_SCRYPT_N: '512', NODE_ENV: 'test' }, /power of two/],
  ])('%s is refused at start', (_name, env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
