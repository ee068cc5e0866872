#!/usr/bin/python3
"""Check the relative links of the documentation: every [text](path#anchor) in docs/*.md and README.md names a
file that exists and, for a Markdown file with #anchor, a heading of it that GitHub turns into that anchor
(lower case, punctuation dropped, spaces to hyphens, -1, -2 for repeats; headings inside code blocks do not
count). With --refs, also the plain mentions docs/NAME.md#anchor in every other file git tracks (comments in
sources, experiments and scripts).

    /usr/bin/python3 scripts/check_doc_links.py [ROOT] [--refs]     # exit 1 and a line per broken link
"""
import re, sys, subprocess, unicodedata, pathlib

args = [a for a in sys.argv[1:] if not a.startswith('-')]
root = pathlib.Path(args[0] if args else pathlib.Path(__file__).resolve().parent.parent).resolve()

def slug(text):
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', text)        # links: their text
    text = re.sub(r'<[^>]+>', '', text)                             # inline html
    text = text.strip().lower()
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in '-_' or cat[0] in 'LMN':
            out.append(ch)
        elif ch == ' ':
            out.append('-')
    return ''.join(out)

_anchors = {}
def anchors(path):
    if path not in _anchors:
        seen, result, fence = {}, set(), None
        for line in path.read_text(encoding='utf-8').split('\n'):
            m = re.match(r'\s{0,3}(`{3,}|~{3,})', line)
            if m:
                mark = m.group(1)[0]
                if fence is None: fence = mark
                elif fence == mark: fence = None
                continue
            if fence: continue
            h = re.match(r' {0,3}(#{1,6})\s+(.*?)\s*#*\s*$', line)
            if not h: continue
            s = slug(h.group(2))
            n = seen.get(s, 0); seen[s] = n + 1
            result.add(s if n == 0 else f'{s}-{n}')
        for m in re.finditer(r'<a\s+(?:name|id)="([^"]+)"', path.read_text(encoding='utf-8')):
            result.add(m.group(1))
        _anchors[path] = result
    return _anchors[path]

def check(src, target, where, errors):
    if re.match(r'[a-z]+:', target): return 0
    path, _, anchor = target.partition('#')
    dest = (src.parent / path).resolve() if path else src
    if not dest.exists():
        errors.append(f'{where}: {target}: no such file'); return 1
    if anchor and dest.suffix == '.md' and anchor not in anchors(dest):
        errors.append(f'{where}: {target}: no heading gives #{anchor}'); return 1
    return 1

errors, count = [], 0
md = sorted((root / 'docs').glob('*.md')) + [root / 'README.md']
link = re.compile(r'\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
for f in md:
    fence = None
    for i, line in enumerate(f.read_text(encoding='utf-8').split('\n'), 1):
        m = re.match(r'\s{0,3}(`{3,}|~{3,})', line)
        if m:
            mark = m.group(1)[0]
            if fence is None: fence = mark
            elif fence == mark: fence = None
            continue
        if fence: continue
        for m in link.finditer(re.sub(r'`[^`]*`', lambda x: ' ' * len(x.group(0)), line)):
            count += check(f, m.group(1), f'{f.relative_to(root)}:{i}', errors)
print(f'{count} relative links in {len(md)} Markdown files')

if '--refs' in sys.argv:
    files = subprocess.run(['git', '-C', str(root), 'ls-files'], capture_output=True, text=True).stdout.split()
    refs = 0
    for name in files:
        p = root / name
        if p.suffix in ('.md', '.png', '.svg', '.onnx', '.gz') or not p.is_file(): continue
        try: text = p.read_text(encoding='utf-8')
        except (UnicodeDecodeError, OSError): continue
        for i, line in enumerate(text.split('\n'), 1):
            for m in re.finditer(r'\bdocs/([\w.-]+\.md)(#[\w-]+)?', line):
                refs += 1
                check(root / 'README.md', 'docs/' + m.group(1) + (m.group(2) or ''), f'{name}:{i}', errors)
    print(f'{refs} mentions of docs/*.md[#anchor] in other files')

for e in errors: print('BROKEN', e)
print('OK' if not errors else f'{len(errors)} broken')
sys.exit(1 if errors else 0)
