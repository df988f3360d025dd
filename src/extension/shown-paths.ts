import * as path from 'node:path';
import type { ApprovalRequest } from '../core/policy/approval';
import type { GrantScope } from '../core/policy/grants';
import type { GrantScopeView } from '../protocol';

// Core keeps a path grant's real, absolute path (a grant covers that file, not another name for
// it); a person reads it relative to the workspace, as every other path in the panel
// (issue 21.6). Only the views' copy changes: nothing a view sends back carries the path.

/** `p` relative to the workspace folder holding it (the folder's name first when there are several); else as is. */
export function workspaceRelative(p: string, roots: readonly string[]): string {
  for (const root of roots) {
    const rel = path.relative(root, p);
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) continue;
    const posix = rel.split(path.sep).join('/');
    return roots.length > 1 ? `${path.basename(root)}/${posix}` : posix;
  }
  return p;
}

export function scopeView(scope: GrantScope, roots: readonly string[]): GrantScopeView {
  return scope.kind === 'path' ? { kind: 'path', value: workspaceRelative(scope.value, roots) } : scope;
}

/** The request as the views show it: its grant's path relative to the workspace. */
export function requestForView(request: ApprovalRequest, roots: readonly string[]): ApprovalRequest {
  return request.grant ? { ...request, grant: scopeView(request.grant, roots) } : request;
}
