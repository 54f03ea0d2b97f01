// Activation only: start the Margin language server over stdio for Markdown files.
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const settings = vscode.workspace.getConfiguration("margin");
  const [command, ...args] = settings.get<string[]>("command", ["margin", "lsp"]);
  const serverOptions: ServerOptions = { command, args };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file", language: "markdown" }],
    // The same keys as [tool.margin]; the server also asks via workspace/configuration.
    initializationOptions: {
      margin: {
        tolerance: settings.get<number>("tolerance"),
        codeSpans: settings.get<boolean>("codeSpans"),
        latexMath: settings.get<boolean>("latexMath"),
        coverageLenses: settings.get<boolean>("coverageLenses"),
        coverageDiagnostics: settings.get<boolean>("coverageDiagnostics"),
        checkFrequency: settings.get<string>("checkFrequency"),
        severity: settings.get<Record<string, string>>("severity"),
        // Python calc blocks run only when the project (trust = true) or this setting trusts them AND the
        // window trusts the folder: workspaceTrusted only restricts (docs/jax.md, "Trust: when Python runs").
        trust: settings.get<boolean>("trust"),
        workspaceTrusted: vscode.workspace.isTrusted,
      },
    },
    synchronize: {
      configurationSection: "margin",
      // margin measure in a terminal rewrites the measurement cache: the drafts that measure are re-checked.
      fileEvents: vscode.workspace.createFileSystemWatcher("**/.margin/measurements.json"),
    },
    middleware: {
      workspace: {
        // The server asks for the "margin" section again after each change: it always says the window's trust.
        configuration: async (params, token, next) => {
          const result = await next(params, token);
          if (!Array.isArray(result)) {
            return result;
          }
          return result.map((value, index) =>
            params.items[index]?.section === "margin" && value !== null && typeof value === "object"
              ? { ...value, workspaceTrusted: vscode.workspace.isTrusted }
              : value,
          );
        },
      },
    },
  };
  client = new LanguageClient("margin", "Margin", serverOptions, clientOptions);
  context.subscriptions.push(
    vscode.commands.registerCommand("margin.restart", async () => {
      await client?.restart();
    }),
    // Leaving Restricted Mode: tell the server, which asks for the settings again (now with workspaceTrusted).
    vscode.workspace.onDidGrantWorkspaceTrust(async () => {
      await client?.sendNotification(DidChangeConfigurationNotification.type, {
        settings: { margin: { workspaceTrusted: true } },
      });
    }),
  );
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
