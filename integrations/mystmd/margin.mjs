/**
 * margin.mjs: a mystmd (Jupyter Book 2) plugin that publishes what Margin computed.
 *
 *   project:
 *     plugins:
 *       - path/to/integrations/mystmd/margin.mjs
 *
 * - {calc}`t -> days` becomes its value ("22.5 days", in the unit the author asked for);
 * - ```calc fences and the {calc} directive (```{calc}, :::{calc}) show each statement's
 *   value and each check's verdict as trailing comments (# = 22.5 days, # ✓);
 * - problems (**Question 1:** …, {exercise}) get a badge: passed, failed or untested;
 * - claim markers (<!-- ≈ t -->) and hidden calc comments are left out, so `myst build --md`
 *   no longer writes them as "% ≈ t" comments;
 * - every error Margin reports is a build message at file:line: an error by default, so
 *   `myst build --strict` fails (mystmd itself exits 0 on errors without --strict), a
 *   warning with MARGIN_FAIL_ON=warning, nothing with MARGIN_FAIL_ON=none.
 *
 * Values come from ONE `margin render --format json` per build, over the project's Markdown
 * files (MARGIN_COMMAND says how to run Margin, default `margin`; MARGIN_JSON names a file
 * made beforehand instead). docs/publishing.md has the set-up.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const SKIPPED_FOLDERS = new Set(['_build', 'node_modules', '__pycache__']);
const CLAIM = /^\s*(≈|~=|==|<=|>=|≤|≥|<|>|=)/;
const HIDDEN_CALC = /^\s*calc[ \t]*(\r\n|\r|\n|$)/;
const BADGES = { pass: '✓ passed', fail: '✗ failed', untested: 'untested' };

/** The project's Markdown files under `root`, leaving out build output and hidden folders. */
export function markdownFiles(root) {
  const found = [];
  const walk = (folder) => {
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      if (entry.name.startsWith('.') || SKIPPED_FOLDERS.has(entry.name)) continue;
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(md|markdown)$/i.test(entry.name)) found.push(full);
    }
  };
  walk(root);
  return found.sort();
}

/** Split a command line like "python -m server" into its words (no shell is involved). */
function words(command) {
  return command.match(/"[^"]*"|'[^']*'|\S+/g).map((word) => word.replace(/^["']|["']$/g, ''));
}

let report = null;
const pages = new Map();

/** The render JSON: read once per build (one `margin render --format json` for every file). */
export function loadReport(root = process.cwd(), env = process.env) {
  if (report !== null) return report;
  let text;
  if (env.MARGIN_JSON) {
    text = fs.readFileSync(path.resolve(root, env.MARGIN_JSON), 'utf8');
  } else {
    const [program, ...prefix] = words(env.MARGIN_COMMAND || 'margin');
    const args = [...prefix, 'render', '--format', 'json', ...markdownFiles(root)];
    try {
      text = execFileSync(program, args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      // Exit 1: something could not be evaluated; the JSON says what, and the build reports it.
      if (error.status !== 1 || !error.stdout) {
        throw new Error(`margin: '${program} ${args.slice(0, 3).join(' ')}' failed: ${error.stderr || error.message}`);
      }
      text = error.stdout;
    }
  }
  report = JSON.parse(text);
  return report;
}

/** Forget the report (tests; a watching build would also call it between builds). */
export function resetReport() {
  report = null;
  pages.clear();
}

/** This file's record and what of it has been used so far. */
function page(vfile) {
  const wanted = path.resolve(vfile.path);
  if (!pages.has(wanted)) {
    const files = Object.values(loadReport().files);
    const record = files.find((file) => file.absolute === wanted || path.resolve(file.path) === wanted) || null;
    pages.set(wanted, { record });
  }
  return pages.get(wanted);
}

function failOn() {
  return (process.env.MARGIN_FAIL_ON || 'error').toLowerCase();
}

function report_(vfile, text, line, column, ruleId) {
  const mode = failOn();
  if (mode === 'none') return;
  // mystmd may read a page more than once in a build (the site, then each export): say it once.
  const said = vfile.messages.some((m) => m.reason === text && m.line === line && m.column === column);
  if (said) return;
  const message = vfile.message(text, { line, column }, `margin:${ruleId}`);
  message.fatal = mode === 'error';
  message.source = 'margin';
}

/**
 * The role written `{calc}`expr`` at `start` (mystmd's position of the role): the one on the same
 * line nearest that column, else the first with that expression. A page may be read more than
 * once in a build, so nothing is "used up".
 */
function findRole(state, expr, start) {
  const roles = (state.record ? state.record.roles : []).filter((role) => role.expr === expr);
  const sameLine = roles.filter((role) => start && role.line === start.line);
  const distance = (role) => Math.abs(role.column - (start.column || 0));
  return sameLine.sort((a, b) => distance(a) - distance(b))[0] || roles[0] || null;
}

const squeeze = (text) => text.replace(/\s+/g, '');

/** The calc block with this content, the one starting at `line` if there are several. */
function findBlock(state, source, line) {
  const blocks = (state.record ? state.record.blocks : []).filter(
    (block) => !block.hidden && squeeze(block.source) === squeeze(source),
  );
  return blocks.find((block) => block.line === line) || blocks[0] || null;
}

const calcRole = {
  name: 'calc',
  doc: 'A value Margin computes: {calc}`t -> days` shows 22.5 days.',
  body: { type: String, required: true },
  run(data, vfile) {
    const state = page(vfile);
    const expr = String(data.body).trim();
    const start = data.node?.position?.start;
    const role = findRole(state, expr, start);
    if (role && role.ok) return [{ type: 'text', value: role.display }];
    const where = role || start || {};
    report_(vfile, `{calc}\`${expr}\` has no value: ${role ? role.message : 'Margin did not read it'}`,
      where.line, where.column, 'role');
    return [{ type: 'inlineCode', value: expr }];
  },
};

const calcDirective = {
  name: 'calc',
  doc: 'A Margin calc block, shown with its values.',
  arg: { type: String },
  options: { label: { type: String }, class: { type: String } },
  body: { type: String },
  run(data, vfile) {
    const source = String(data.body || '');
    const block = findBlock(page(vfile), source, data.node?.position?.start?.line);
    return [{ type: 'code', lang: 'calc', value: block ? block.rendered : source, data: { margin: true } }];
  },
};

function walk(node, visit, parent = null) {
  visit(node, parent);
  for (const child of [...(node.children || [])]) walk(child, visit, node);
}

function text(node) {
  if (node.value !== undefined) return String(node.value);
  return (node.children || []).map(text).join('');
}

function badge(problem) {
  let label = BADGES[problem.status] || problem.status;
  if (problem.status === 'fail' && problem.checks.failed > 0) {
    label += `: ${problem.checks.failed} of ${problem.checks.total} checks`;
  }
  return { type: 'strong', children: [{ type: 'text', value: label }], data: { margin: problem.status } };
}

/** Per page: annotate ```calc fences, strip claim markers, badge problems, report Margin's errors. */
const marginTransform = {
  name: 'margin',
  doc: 'Calc blocks with values, problem badges and Margin errors at file:line.',
  stage: 'document',
  plugin: () => (tree, vfile) => {
    const state = page(vfile);
    if (!state.record) return;
    const problems = state.record.problems;
    walk(tree, (node, parent) => {
      if (node.type === 'code' && node.lang === 'calc' && !node.data?.margin) {
        const block = findBlock(state, String(node.value), node.position?.start?.line);
        if (block) node.value = block.rendered;
      } else if (node.type === 'comment' && parent && (CLAIM.test(node.value) || HIDDEN_CALC.test(node.value))) {
        parent.children.splice(parent.children.indexOf(node), 1);
      } else if (node.type === 'paragraph' && node.children?.[0]?.type === 'strong' && node.position) {
        const lead = text(node.children[0]);
        const problem = problems.find((p) => p.line === node.position.start.line && lead.startsWith(p.id));
        if (problem) node.children.unshift(badge(problem), { type: 'text', value: ' ' });
      } else if (node.type === 'exercise') {
        const title = text((node.children || []).find((child) => child.type === 'admonitionTitle') || {});
        const line = node.position?.start?.line;
        const problem = problems.find((p) => (line ? p.line === line : title.trim() === p.title));
        const paragraph = (node.children || []).find((child) => child.type === 'paragraph');
        if (problem && paragraph) paragraph.children.unshift(badge(problem), { type: 'text', value: ' ' });
      }
    });
    for (const d of state.record.diagnostics) {
      if (d.severity === 'error') report_(vfile, `${d.message} (Margin ${d.code})`, d.line, d.column, d.code);
    }
  },
};

const plugin = {
  name: 'Margin',
  roles: [calcRole],
  directives: [calcDirective],
  transforms: [marginTransform],
};

export default plugin;
