import { errorRegistry } from '../../src/errors';
import { loadSpec } from '../../src/spec';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('the error registry and the spec agree', () => {
  const spec = loadSpec().document as Json;
  const specCodes: string[] = spec.components.schemas.Problem.properties.code.enum;

  test('every code in the registry is in the spec enum, and the reverse', () => {
    expect([...specCodes].sort()).toEqual(Object.keys(errorRegistry).sort());
  });

  test('every response example in the spec uses a registered code with its registered status and title', () => {
    for (const [name, response] of Object.entries(spec.components.responses as Json)) {
      const example = response.content['application/problem+json'].example;
      const entry = errorRegistry[example.code as keyof typeof errorRegistry];
      expect([name, entry?.status, entry?.title]).toEqual([name, example.status, example.title]);
    }
  });
});
