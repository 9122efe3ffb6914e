'use strict';
// The service as `npm start` runs it (src/main.ts, configured by its environment), loaded from the TypeScript sources
// through typescript's transpileModule (what ts-jest does), so a test that kills it with SIGKILL needs no build.
require('./ts-register.cjs');

require('../../src/main.ts');
