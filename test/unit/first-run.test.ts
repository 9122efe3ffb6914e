import path from 'node:path';
import { loadConfig } from '../../src/config';
import { startupBlock } from '../../src/first-run';

const at = (address: string, port: number) => ({ address, port, family: address.includes(':') ? 'IPv6' : 'IPv4' });

describe('the block npm start prints (README "Set up on a fresh machine")', () => {
  test.each([
    ['a wildcard address is opened as localhost', {}, at('0.0.0.0', 8080), ['  dashboard  http://localhost:8080/', '  API docs   http://localhost:8080/docs']],
    ['the first ALLOWED_HOSTS name when listed', { ALLOWED_HOSTS: 'play.example.com,[::1]' }, at('::', 80), ['  dashboard  http://play.example.com:80/']],
    ['a loopback listener as itself', { HOST: '::1' }, at('::1', 9000), ['  API docs   http://[::1]:9000/docs']],
    ['Docker runtime named', { RUNTIME: 'docker' }, at('0.0.0.0', 8080), [expect.stringMatching(/^gsh is running on Node v\d+.*game servers in Docker containers, engine unix:\/\/\/var\/run\/docker.sock/)]],
    ['metrics behind the token on the main port', { METRICS_TOKEN: 'x'.repeat(32) }, at('127.0.0.1', 8080), ['  metrics    http://127.0.0.1:8080/metrics (Authorization: Bearer $METRICS_TOKEN)']],
  ])('%s', (_name, env, address, want) => {
    const text = startupBlock({ config: loadConfig(env), address, dashboardUsers: 1, node: 'v24.1.0' });
    expect(text.split('\n')).toEqual(expect.arrayContaining(want));
    expect(text).not.toContain('No dashboard account');
  });

  test('while no account can sign in, the exact command for the first one, with DATA_DIR when it is not the default', () => {
    const dataDir = path.join('/srv', 'gsh data');
    const text = startupBlock({ config: loadConfig({ DATA_DIR: dataDir }), address: at('0.0.0.0', 8080), dashboardUsers: 0, node: 'v24.21.0' });
    expect(text).toBe(
      [
        'gsh is running on Node v24.21.0 (game servers as local processes).',
        '  dashboard  http://localhost:8080/',
        '  API docs   http://localhost:8080/docs',
        '  data       /srv/gsh data',
        'No dashboard account yet. Create the first one (in another terminal, from this folder):',
        "  DATA_DIR='/srv/gsh data' npx gsh user create --email you@example.com --password '<8 or more characters>'",
        '',
      ].join('\n'),
    );
    const plain = startupBlock({ config: loadConfig({}), address: at('0.0.0.0', 8080), dashboardUsers: 0, node: 'v24.21.0' });
    expect(plain).toContain("\n  npx gsh user create --email you@example.com --password '<8 or more characters>'\n");
  });
});
