// Activation only: start the Margin language server over stdio for Markdown files.
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";

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
        trust: vscode.workspace.isTrusted,
      },
    },
    synchronize: { configurationSection: "margin" },
  };
  client = new LanguageClient("margin", "Margin", serverOptions, clientOptions);
  context.subscriptions.push(
    vscode.commands.registerCommand("margin.restart", async () => {
      await client?.restart();
    }),
  );
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
