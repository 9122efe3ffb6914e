import { createTestApp, type TestApp } from '../helpers/app';

let t: TestApp;
let token: string;
let serverId: string;

function auth() {
  return { Authorization: `Bearer ${token}` };
}

/** A fresh app with one token and one server, the state every test here starts from. */
async function setup() {
  t = await createTestApp();
  token = t.token();
  serverId = (await t.http.post('/v1/servers').set(auth()).send({ name: 'm', plan: 'micro', version: 'flying-squid-1.20' })).body.id;
}

const teardown = () => t.finish();

describe('GET /v1/servers/{server_id}/metrics?range=', () => {
  // Read-only: these tests only GET a server no test writes samples for, so they share one app built once.
  describe('without samples', () => {
    beforeAll(setup);
    afterAll(() => t.close());
    afterEach(() => t.expectContract());

    test.each([
      ['1w', 'unknown unit'],
      ['1H', 'upper-case unit'],
      ['1.5h', 'fraction'],
      ['0h', 'zero'],
      ['-1h', 'negative'],
      ['01h', 'leading zero'],
      ['', 'empty'],
      ['4m', 'under the 5m minimum'],
      ['61d', 'over the 60d maximum'],
      ['1441h', 'over the maximum in hours'],
      ['9999999d', 'too many digits'],
    ])('%s (%s) → 400 pointing at the parameter', async (range) => {
      const res = await t.http.get(`/v1/servers/${serverId}/metrics?range=${encodeURIComponent(range)}`).set(auth());
      expect(res.status).toBe(400);
      expect([...new Set(res.body.errors.map((e: { pointer: string }) => e.pointer))]).toEqual(['/query/range']);
    });

    test('a server with no samples: an empty window with the default range', async () => {
      const res = await t.http.get(`/v1/servers/${serverId}/metrics`).set(auth());
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ server_id: serverId, range: '1h', now: null, points: [], summary: { sample_count: 0, tps_avg: null } });
    });
  });

  // Writes samples: its own app.
  describe('with samples', () => {
    beforeEach(setup);
    afterEach(teardown);

    test('samples written by the store come back as points, a summary and "now"', async () => {
      const now = Date.now();
      const samples = Array.from({ length: 60 }, (_, i) => ({
        server_id: serverId,
        at: new Date(now - (59 - i) * 5000).toISOString(),
        tps: i === 30 ? 12 : 20,
        cpu_percent: 10 + (i % 5),
        ram_bytes: 100 * 1024 * 1024 + i * 1024,
        players_online: i < 30 ? 1 : 2,
        players_max: 5,
      }));
      t.metrics.write(samples);
      const res = await t.http.get(`/v1/servers/${serverId}/metrics?range=15m`).set(auth());
      expect(res.status).toBe(200);
      expect(res.body.resolution_seconds).toBe(5);
      expect(res.body.points).toHaveLength(60);
      expect(res.body.summary).toMatchObject({ sample_count: 60, tps_min: 12, players_online_peak: 2, cpu_percent_max: 14 });
      expect(res.body.now).toMatchObject({ players_online: 2, tps: 20 });
      const day = await t.http.get(`/v1/servers/${serverId}/metrics?range=24h`).set(auth());
      expect(day.body.summary.sample_count).toBe(60);
      expect(day.body.points.length).toBeLessThanOrEqual(500);
    });
  });
});
