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

    // Issue 29: the answer says what is wrong in words, not with the regular expression of a schema pattern.
    test.each([
      ['range=1w', '/query/range', 'range must be a whole number followed by m, h or d (for example 15m, 24h, 7d); got "1w"'],
      ['range=61d', '/query/range', 'range must be between 5m and 60d; got 61d'],
      ['from=2026-11-22T07:00:00Z&range=1h', '/query/from', 'give either from or range, not both'],
      ['from=2026-11-22T07:00:00Z&to=2026-11-22T06:00:00Z', '/query/from', 'from must be before to (2026-11-22T06:00:00Z); got 2026-11-22T07:00:00Z'],
      ['from=2026-11-22T07:58:00Z&to=2026-11-22T08:00:00Z', '/query/from', 'the window from 2026-11-22T07:58:00Z to 2026-11-22T08:00:00Z must be 5m to 60d long'],
      ['from=yesterday', '/query/from', 'must match format "date-time"'],
      ['to=2026-11-22 08:00', '/query/to', 'must match format "date-time"'],
    ])('%s → 400 with a short message at the parameter', async (query, pointer, detail) => {
      const res = await t.http.get(`/v1/servers/${serverId}/metrics?${query.replace(/ /g, '%20')}`).set(auth());
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ pointer, detail })]); // and the keyword it broke (`rule`)
      expect(JSON.stringify(res.body)).not.toMatch(/\(\?:/);
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

      // from/to: the window between them only (samples are whole seconds; the 5 s ones between 100 s and 40 s ago).
      const iso = (agoS: number) => new Date(Math.floor(now / 1000) * 1000 - agoS * 1000).toISOString();
      const between = await t.http.get(`/v1/servers/${serverId}/metrics`).query({ from: iso(400), to: iso(40) }).set(auth());
      expect(between.status).toBe(200);
      expect(between.body).toMatchObject({ range: '6m', to: iso(40), resolution_seconds: 5 });
      const times = between.body.points.map((p: { at: string }) => Date.parse(p.at));
      expect(Math.max(...times)).toBeLessThanOrEqual(Date.parse(iso(40)));
      const storedAt = (x: { at: string }) => Math.floor(Date.parse(x.at) / 1000) * 1000;
      expect(between.body.summary.sample_count).toBe(samples.filter((x) => storedAt(x) >= Date.parse(iso(400)) && storedAt(x) <= Date.parse(iso(40))).length);
      expect(between.body.summary.sample_count).toBeLessThan(60);
      const back = await t.http.get(`/v1/servers/${serverId}/metrics`).query({ range: '5m', to: iso(200) }).set(auth());
      expect(back.body).toMatchObject({ range: '5m', to: iso(200) });
      expect(back.body.summary.sample_count).toBe(samples.filter((x) => storedAt(x) <= Date.parse(iso(200))).length);
    });
  });
});
