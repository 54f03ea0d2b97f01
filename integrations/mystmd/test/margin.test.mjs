// Unit tests of the mystmd plugin with a fake `margin` (the real build is tests/publishing/test_mystmd.py).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';

import plugin, { markdownFiles, resetReport } from '../margin.mjs';

const [role] = plugin.roles;
const [directive] = plugin.directives;
const [transform] = plugin.transforms;

let folder;
let page;

class FakeFile {
  constructor(file) {
    this.path = file;
    this.messages = [];
  }
  message(reason, place, origin) {
    const message = { reason, line: place.line, column: place.column, origin, fatal: false };
    this.messages.push(message);
    return message;
  }
}

function report() {
  return {
    version: 1,
    kind: 'render',
    files: {
      'ch.md': {
        path: 'ch.md',
        absolute: page,
        roles: [
          { line: 3, column: 10, expr: 't -> days', ok: true, display: '22.5 days' },
          { line: 5, column: 1, expr: 't -> days', ok: true, display: '45 days' },
          { line: 6, column: 1, expr: 'oops', ok: false, display: null, message: "N001: unknown name 'oops'" },
        ],
        blocks: [{ line: 1, end_line: 3, hidden: false, source: 't = 2 s', rendered: 't = 2 s  # = 2 s' }],
        problems: [{ id: 'Question 1', title: 'Question 1', line: 8, status: 'fail', checks: { passed: 1, failed: 1, total: 2 } }],
        diagnostics: [{ line: 9, column: 1, severity: 'error', code: 'C001', message: 'check failed: computed 2 s, not ≈ 3 s' }],
      },
    },
  };
}

beforeEach(() => {
  folder = fs.mkdtempSync(path.join(os.tmpdir(), 'margin-mystmd-'));
  page = path.join(folder, 'ch.md');
  fs.writeFileSync(page, '# Chapter\n');
  fs.mkdirSync(path.join(folder, '_build'));
  fs.writeFileSync(path.join(folder, '_build', 'old.md'), '');
  // A stand-in for `margin`: counts its calls and prints the report.
  const fake = path.join(folder, 'fake-margin.mjs');
  fs.writeFileSync(fake, `import fs from 'node:fs';
fs.appendFileSync(${JSON.stringify(path.join(folder, 'calls'))}, JSON.stringify(process.argv.slice(2)) + '\\n');
process.stdout.write(${JSON.stringify(JSON.stringify(report()))});
process.exit(1);`);
  process.env.MARGIN_COMMAND = `${process.execPath} ${fake}`;
  delete process.env.MARGIN_JSON;
  delete process.env.MARGIN_FAIL_ON;
  resetReport();
  process.chdir(folder);
});

afterEach(() => {
  process.chdir(os.tmpdir());
  fs.rmSync(folder, { recursive: true, force: true });
});

const calls = () => fs.readFileSync(path.join(folder, 'calls'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));

test('roles get their values from one margin run per build, matched by line and column', () => {
  const file = new FakeFile(page);
  const first = role.run({ body: 't -> days', node: { position: { start: { line: 3, column: 10 } } } }, file);
  const second = role.run({ body: 't -> days', node: { position: { start: { line: 5, column: 1 } } } }, file);
  assert.deepEqual(first, [{ type: 'text', value: '22.5 days' }]);
  assert.deepEqual(second, [{ type: 'text', value: '45 days' }]);
  assert.equal(calls().length, 1); // exit 1 (something unevaluated) still gives the JSON
  assert.deepEqual(calls()[0].slice(0, 3), ['render', '--format', 'json']);
  assert.deepEqual(calls()[0].slice(3), [page]); // the project's drafts, not _build/
  assert.equal(file.messages.length, 0);
});

test('a role without a value is an error at its line and shows its expression', () => {
  const file = new FakeFile(page);
  const result = role.run({ body: 'oops', node: { position: { start: { line: 6, column: 1 } } } }, file);
  assert.deepEqual(result, [{ type: 'inlineCode', value: 'oops' }]);
  assert.equal(file.messages.length, 1);
  assert.match(file.messages[0].reason, /\{calc\}`oops` has no value: N001/);
  assert.equal(file.messages[0].line, 6);
  assert.equal(file.messages[0].fatal, true);
});

test('MARGIN_FAIL_ON=warning makes errors warnings, and none says nothing', () => {
  process.env.MARGIN_FAIL_ON = 'warning';
  const file = new FakeFile(page);
  role.run({ body: 'oops', node: { position: { start: { line: 6, column: 1 } } } }, file);
  assert.equal(file.messages[0].fatal, false);
  process.env.MARGIN_FAIL_ON = 'none';
  const quiet = new FakeFile(page);
  role.run({ body: 'oops', node: { position: { start: { line: 6, column: 1 } } } }, quiet);
  assert.equal(quiet.messages.length, 0);
});

test('the calc directive renders its block with the values', () => {
  const result = directive.run({ body: 't = 2 s', node: { position: { start: { line: 1 } } } }, new FakeFile(page));
  assert.equal(result[0].type, 'code');
  assert.equal(result[0].lang, 'calc');
  assert.equal(result[0].value, 't = 2 s  # = 2 s');
});

test('the transform annotates calc fences, strips claim markers, badges problems and reports errors once', () => {
  const tree = {
    type: 'root',
    children: [
      { type: 'code', lang: 'calc', value: 't = 2 s', position: { start: { line: 1 } } },
      { type: 'comment', value: ' calc\nhidden = 1\n' },
      {
        type: 'paragraph',
        children: [{ type: 'text', value: 'about 3 s' }, { type: 'comment', value: ' ≈ t ' }],
      },
      {
        type: 'paragraph',
        position: { start: { line: 8 } },
        children: [{ type: 'strong', children: [{ type: 'text', value: 'Question 1:' }] }, { type: 'text', value: ' How long?' }],
      },
      { type: 'comment', value: ' an ordinary comment ' },
    ],
  };
  const file = new FakeFile(page);
  const run = transform.plugin();
  run(tree, file);
  run(tree, file);
  assert.equal(tree.children[0].value, 't = 2 s  # = 2 s');
  assert.deepEqual(tree.children.map((node) => node.type), ['code', 'paragraph', 'paragraph', 'comment']);
  assert.deepEqual(tree.children[1].children, [{ type: 'text', value: 'about 3 s' }]);
  const badge = tree.children[2].children[0];
  assert.equal(badge.type, 'strong');
  assert.equal(badge.children[0].value, '✗ failed: 1 of 2 checks');
  assert.equal(file.messages.length, 1);
  assert.equal(file.messages[0].line, 9);
  assert.match(file.messages[0].reason, /check failed: computed 2 s, not ≈ 3 s \(Margin C001\)/);
});

test('MARGIN_JSON names a report made beforehand: margin is not run', () => {
  fs.writeFileSync(path.join(folder, 'margin.json'), JSON.stringify(report()));
  process.env.MARGIN_JSON = 'margin.json';
  process.env.MARGIN_COMMAND = 'false';
  const result = role.run({ body: 't -> days', node: { position: { start: { line: 3, column: 10 } } } }, new FakeFile(page));
  assert.deepEqual(result, [{ type: 'text', value: '22.5 days' }]);
});

test('the drafts are found below the project, leaving out build output and hidden folders', () => {
  fs.mkdirSync(path.join(folder, '.git'));
  fs.writeFileSync(path.join(folder, '.git', 'x.md'), '');
  fs.mkdirSync(path.join(folder, 'part'));
  fs.writeFileSync(path.join(folder, 'part', 'two.markdown'), '');
  assert.deepEqual(markdownFiles(folder), [page, path.join(folder, 'part', 'two.markdown')]);
});
