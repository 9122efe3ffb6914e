import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { AppError, errorRegistry, type ErrorCode } from '../../src/errors';
import { PROBLEM_BASE, RETRY_AFTER_503_S, problemDocument, sendProblem } from '../../src/http/problem';
import { loadSpec } from '../../src/spec';
import { ACTION_ERROR_CODES, actionFailure } from '../../src/store/actions-repo';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('the error registry and the spec agree', () => {
  const spec = loadSpec().document as Json;
  const specCodes: string[] = spec.components.schemas.ProblemCode.enum;

  test('every code in the registry is in the spec enum, and the reverse', () => {
    expect([...specCodes].sort()).toEqual(Object.keys(errorRegistry).sort());
  });

  test('ActionErrorCode lists the codes an action fails with, each a registered code', () => {
    const actionCodes: string[] = spec.components.schemas.ActionErrorCode.enum;
    expect([...actionCodes].sort()).toEqual([...ACTION_ERROR_CODES].sort());
    for (const code of actionCodes) expect(Object.keys(errorRegistry)).toContain(code);
  });

  test('an error outside ActionErrorCode ends an action as internal_error, keeping its detail', () => {
    expect(actionFailure('port_in_use', 'taken')).toEqual({ code: 'port_in_use', detail: 'taken' });
    expect(actionFailure('validation_failed', 'odd')).toEqual({ code: 'internal_error', detail: 'odd' });
  });

  test('every response example in the spec uses a registered code with its registered status and title', () => {
    for (const [name, response] of Object.entries(spec.components.responses as Json)) {
      const example = response.content['application/problem+json'].example;
      const entry = errorRegistry[example.code as keyof typeof errorRegistry];
      expect([name, entry?.status, entry?.title]).toEqual([name, example.status, example.title]);
    }
  });
});

describe('problemDocument builds, for every registered code, a document the spec accepts', () => {
  const spec = loadSpec().document as Json;
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  // The Problem schema refers to FieldError as '#/components/...', so it is compiled inside the spec's components.
  const validate = ajv.compile({ $ref: '#/components/schemas/Problem', components: spec.components });
  const codes = Object.keys(errorRegistry) as ErrorCode[];

  test.each(codes)('%s', (code) => {
    const withInstance = problemDocument(new AppError(code, 'What went wrong.'), '/v1/servers');
    // Without an instance, as client-errors.ts sends it for a request the HTTP parser refused.
    const without = problemDocument(new AppError(code, 'What went wrong.'));
    for (const doc of [withInstance, without]) {
      expect(validate(doc)).toBe(true);
      expect(doc).toMatchObject({ type: PROBLEM_BASE + code, code, ...errorRegistry[code] });
    }
    expect(withInstance.instance).toBe('/v1/servers');
    expect(without).not.toHaveProperty('instance');
  });

  test('detail, instance and field errors are carried over, and cut to the lengths the spec allows', () => {
    const errors = [{ pointer: '/body/name', detail: 'is required' }];
    const doc = problemDocument(new AppError('validation_failed', 'd'.repeat(3000), errors), `/v1/${'p'.repeat(3000)}`);
    expect(doc.detail).toHaveLength(2000);
    expect(doc.instance).toHaveLength(2000);
    expect(doc.errors).toEqual(errors);
    expect(validate(doc)).toBe(true);
  });
});

describe('sendProblem', () => {
  // A stand-in for express's Response: only what sendProblem touches.
  const fakeRes = () => {
    const headers = new Map<string, string>();
    const res = {
      headers,
      statusCode: 0,
      body: '',
      locals: {} as Record<string, unknown>,
      setHeader: (k: string, v: string) => void headers.set(k.toLowerCase(), v),
      hasHeader: (k: string) => headers.has(k.toLowerCase()),
      getHeader: (k: string) => headers.get(k.toLowerCase()),
      status(code: number) { res.statusCode = code; return res; },
      type: () => res,
      send(b: string) { res.body = b; return res; },
    };
    return res;
  };

  test('every 503 says Retry-After; a throw site\'s own value wins', () => {
    const a = fakeRes();
    sendProblem(a as never, new AppError('service_unavailable', 'Shutting down.'), '/v1/servers');
    expect(a.headers.get('retry-after')).toBe(String(RETRY_AFTER_503_S));
    const b = fakeRes();
    sendProblem(b as never, new AppError('capacity_exhausted', 'Full.', undefined, { 'Retry-After': '60' }), '/v1/servers');
    expect(b.headers.get('retry-after')).toBe('60');
    const c = fakeRes();
    sendProblem(c as never, new AppError('invalid_state', 'No.'), '/v1/servers');
    expect(c.headers.has('retry-after')).toBe(false);
  });
});

describe('AppError', () => {
  test('captures no stack (an answer, not a fault) and leaves Error.stackTraceLimit as it was', () => {
    const before = Error.stackTraceLimit;
    const err = new AppError('not_found', 'Nothing here.');
    expect(Error.stackTraceLimit).toBe(before);
    expect([err instanceof Error, err.name, err.message, err.status]).toEqual([true, 'AppError', 'Nothing here.', 404]);
    expect(err.stack).toBe('AppError: Nothing here.');
    // Other errors still carry their frames.
    expect(new Error('x').stack).toMatch(/\n\s+at /);
  });
});
