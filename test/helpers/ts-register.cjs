'use strict';
// Lets a plain Node process (a test's child that is killed with SIGKILL) require the TypeScript sources, transpiled
// by typescript's transpileModule as ts-jest does, so no build is needed. Required first by such fixtures.
const fs = require('node:fs');
const ts = require('typescript');

require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
    fileName: filename,
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  });
  module._compile(outputText, filename);
};
