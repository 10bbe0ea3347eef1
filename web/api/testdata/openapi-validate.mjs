// Validates the OpenAPI document on stdin with @readme/openapi-parser,
// every rule at its default, "error", and prints one JSON line:
// {"version","valid","errors":[…],"warnings":[…]}. The one argument is
// the npm prefix the parser is installed under (TestOpenAPIStrict).
import { createRequire } from 'node:module';
import path from 'node:path';

const prefix = process.argv[2];
if (!prefix) {
  console.error('usage: node openapi-validate.mjs NPM_PREFIX < openapi.json');
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(prefix), 'package.json'));
const { validate } = require('@readme/openapi-parser');
const { version } = require('@readme/openapi-parser/package.json');

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const doc = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const res = await validate(doc, { validate: { errors: { colorize: false } } });
const messages = (list) => (list || []).map((e) => (typeof e === 'string' ? e : e.message));
process.stdout.write(JSON.stringify({ version, valid: res.valid, errors: messages(res.errors),
  warnings: messages(res.warnings) }) + '\n');
