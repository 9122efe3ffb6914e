'use strict';
// The service as `npm start` runs it (src/main.ts, configured by its environment), loaded from the TypeScript sources
// through typescript's transpileModule (what ts-jest does), so a test that kills it with SIGKILL needs no build.
const fs = require('node:fs');
const ts = require('typescript');

require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
    fileName: filename,
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  });
  module._compile(outputText, filename);
};

require('../../src/main.ts');
