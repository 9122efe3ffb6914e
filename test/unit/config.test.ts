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
