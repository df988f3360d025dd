import { createEditFileTool } from './edit-file';
import { createListFilesTool, type ListFilesOptions } from './list-files';
import { createReadFileTool, type ReadFileOptions } from './read-file';
import { createRunCommandTool, type RunCommandOptions } from './run-command';
import { createSearchFilesTool, type SearchFilesOptions } from './search-files';
import type { Tool } from './tool';
import { createWriteFileTool } from './write-file';

export interface WorkspaceToolOptions {
  readFile?: ReadFileOptions;
  listFiles?: ListFilesOptions;
  searchFiles?: SearchFilesOptions;
  runCommand?: RunCommandOptions;
}

/** The six workspace tools, sorted by name (a stable tool order keeps request bytes stable). */
export function workspaceTools(options: WorkspaceToolOptions = {}): Tool[] {
  const tools = [
    createEditFileTool(),
    createListFilesTool(options.listFiles),
    createReadFileTool(options.readFile),
    createRunCommandTool(options.runCommand),
    createSearchFilesTool(options.searchFiles),
    createWriteFileTool(),
  ];
  return tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
