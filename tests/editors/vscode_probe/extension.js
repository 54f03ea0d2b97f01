// Test-only probe (tests/editors/test_vscode_real.py): opens the draft named by
// MARGIN_PROBE_DOC, waits for Margin's diagnostics, asks VS Code's own providers
// for hover, inlay hints and code actions (answered by the Margin extension's
// language client), applies the quick fix, and POSTs all of it to MARGIN_PROBE_REPORT.
// With MARGIN_PROBE_SHOTS set it instead sets the scene for the README's screenshots.
const http = require("http");
const vscode = require("vscode");

function marginDiagnostics(uri) {
  return vscode.languages.getDiagnostics(uri).filter((d) => d.source === "margin");
}

function waitFor(uri, predicate, timeoutMs) {
  return new Promise((resolve, reject) => {
    if (predicate(marginDiagnostics(uri))) return resolve(marginDiagnostics(uri));
    const timer = setTimeout(() => { listener.dispose(); reject(new Error("timed out waiting for diagnostics")); }, timeoutMs);
    const listener = vscode.languages.onDidChangeDiagnostics((event) => {
      if (event.uris.some((u) => u.toString() === uri.toString()) && predicate(marginDiagnostics(uri))) {
        clearTimeout(timer);
        listener.dispose();
        resolve(marginDiagnostics(uri));
      }
    });
  });
}

function plain(diagnostic) {
  const r = diagnostic.range;
  return { code: String(diagnostic.code && diagnostic.code.value !== undefined ? diagnostic.code.value : diagnostic.code),
           message: diagnostic.message, range: [r.start.line, r.start.character, r.end.line, r.end.character] };
}

function text(content) {
  return typeof content === "string" ? content : content.value;
}

function post(report) {
  const body = Buffer.from(JSON.stringify(report));
  const request = http.request(process.env.MARGIN_PROBE_REPORT, { method: "POST", headers: { "Content-Type": "application/json", "Content-Length": body.length } });
  request.on("error", () => {});
  request.end(body);
}

async function probe() {
  const report = { vscodeVersion: vscode.version };
  try {
    const uri = vscode.Uri.file(process.env.MARGIN_PROBE_DOC);
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(document);
    const diagnostics = await waitFor(uri, (ds) => ds.length > 0, 60000);
    report.diagnostics = diagnostics.map(plain);
    const lines = document.getText().split("\n");
    const valueLine = lines.findIndex((line) => line.startsWith("t = "));
    const hovers = await vscode.commands.executeCommand("vscode.executeHoverProvider", uri, new vscode.Position(valueLine, 0));
    report.hover = hovers.flatMap((h) => h.contents.map(text)).join("\n");
    const all = new vscode.Range(0, 0, document.lineCount, 0);
    const hints = await vscode.commands.executeCommand("vscode.executeInlayHintProvider", uri, all);
    report.inlayHints = hints.map((h) => ({ line: h.position.line, label: typeof h.label === "string" ? h.label : h.label.map((p) => p.value).join("") }));
    const fieldLine = lines.findIndex((line) => line.startsWith("peak = h100."));
    const completions = await vscode.commands.executeCommand("vscode.executeCompletionItemProvider", uri,
      new vscode.Position(fieldLine, "peak = h100.".length));
    report.fieldCompletions = completions.items.map((item) => (typeof item.label === "string" ? item.label : item.label.label));
    const symbols = await vscode.commands.executeCommand("vscode.executeDocumentSymbolProvider", uri);
    report.symbols = symbols.map((symbol) => symbol.name);
    const lenses = await vscode.commands.executeCommand("vscode.executeCodeLensProvider", uri);
    report.codeLenses = lenses.map((lens) => ({ line: lens.range.start.line, title: lens.command ? lens.command.title : null }));
    const failing = diagnostics.find((d) => String(d.code) === "C001" || (d.code && d.code.value === "C001"));
    const actions = await vscode.commands.executeCommand("vscode.executeCodeActionProvider", uri, failing.range);
    const fix = actions.find((a) => a.kind && a.kind.value === "quickfix" && a.edit);
    report.quickFix = fix ? fix.title : null;
    if (fix) {
      await vscode.workspace.applyEdit(fix.edit);
      const after = await waitFor(uri, (ds) => !ds.some((d) => String(d.code) === "C001" || (d.code && d.code.value === "C001")), 30000);
      report.afterFix = { diagnostics: after.map(plain), text: document.getText() };
    }
  } catch (error) {
    report.error = String(error && error.stack || error);
  }
  post(report);
}

// Screenshot mode (MARGIN_PROBE_SHOTS set, see tests/editors/screenshots.py): sets the scene for each
// picture and asks the test to take it (POST {name}; the test answers once the picture is saved).
function shoot(name) {
  return new Promise((resolve, reject) => {
    const body = Buffer.from(JSON.stringify({ name }));
    const request = http.request(process.env.MARGIN_PROBE_SHOTS, { method: "POST", headers: { "Content-Type": "application/json", "Content-Length": body.length } },
      (response) => {
        let answer = "";
        response.on("data", (chunk) => { answer += chunk; });
        response.on("end", () => (response.statusCode < 300 ? resolve() : reject(new Error(`screenshot ${name}: ${answer}`))));
      });
    request.on("error", reject);
    request.end(body);
  });
}

function at(document, prefix, find) {
  const line = document.getText().split("\n").findIndex((text) => text.startsWith(prefix));
  return new vscode.Position(line, find ? document.lineAt(line).text.indexOf(find) : 0);
}

async function screenshots() {
  const report = { vscodeVersion: vscode.version };
  try {
    const uri = vscode.Uri.file(process.env.MARGIN_PROBE_DOC);
    const document = await vscode.workspace.openTextDocument(uri);
    let editor = await vscode.window.showTextDocument(document, { preview: false });
    await waitFor(uri, (ds) => ds.length >= 2, 60000);
    // (a) the squiggles, the inlay values and the Problems panel listing both mistakes
    await vscode.commands.executeCommand("workbench.action.closeSidebar");
    await vscode.commands.executeCommand("workbench.actions.view.problems");
    editor = await vscode.window.showTextDocument(document, { preview: false });
    const claim = at(document, "training takes", "12 days");
    editor.selection = new vscode.Selection(claim, claim);
    await shoot("vscode-diagnostics");
    // (b) the hover on a computed value: its derivation (the panel closed to leave it room)
    await vscode.commands.executeCommand("workbench.action.closePanel");
    editor = await vscode.window.showTextDocument(document, { preview: false });
    const value = at(document, "t = ");
    editor.selection = new vscode.Selection(value, value);
    await vscode.commands.executeCommand("editor.action.showHover");
    await shoot("vscode-hover");
    // (c) the quick fix on the wrong claim
    await vscode.commands.executeCommand("editor.action.hideHover");
    await vscode.commands.executeCommand("workbench.actions.view.problems");
    editor = await vscode.window.showTextDocument(document, { preview: false });
    editor.selection = new vscode.Selection(claim, claim);
    await vscode.commands.executeCommand("editor.action.quickFix");
    await shoot("vscode-quickfix");
  } catch (error) {
    report.error = String(error && error.stack || error);
  }
  post(report);
}

function activate() {
  if (process.env.MARGIN_PROBE_DOC && process.env.MARGIN_PROBE_REPORT) {
    (process.env.MARGIN_PROBE_SHOTS ? screenshots : probe)();
  }
}

module.exports = { activate, deactivate() {} };
