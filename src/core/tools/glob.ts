// A small glob for search_files' `include` filter: `*` (not `/`), `**` (any depth),
// `?`, `[abc]`, `{ts,js}`. Enough for "*.ts", "src/**/*.test.ts", "*.{js,mjs}".

/** Compile a glob; throws a plain Error with a readable message on a malformed one. */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') {
      if (glob[i + 1] === '*') {
        i++;
        // `**/` also matches no directory at all.
        if (glob[i + 1] === '/') {
          i++;
          re += '(?:.*/)?';
        } else {
          re += '.*';
        }
      } else {
        re += '[^/]*';
      }
    } else if (c === '?') {
      re += '[^/]';
    } else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) throw new Error(`unclosed '[' in ${JSON.stringify(glob)}`);
      let body = glob.slice(i + 1, end).replace(/\\/g, '\\\\');
      if (body.startsWith('!')) body = `^${body.slice(1)}`;
      re += `[${body}]`;
      i = end;
    } else if (c === '{') {
      braces++;
      re += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      re += ')';
    } else if (c === ',' && braces > 0) {
      re += '|';
    } else {
      re += c.replace(/[.+^$()|\\{}\]]/g, '\\$&');
    }
  }
  if (braces > 0) throw new Error(`unclosed '{' in ${JSON.stringify(glob)}`);
  return new RegExp(`^${re}$`);
}

/** Match a `/`-separated relative path: a glob without `/` matches the base name. */
export function globMatches(re: RegExp, glob: string, relPaths: readonly string[]): boolean {
  if (!glob.includes('/')) {
    const base = relPaths[0].slice(relPaths[0].lastIndexOf('/') + 1);
    return re.test(base);
  }
  return relPaths.some((p) => re.test(p));
}
