import { equal, ok } from "node:assert/strict";
import { parsePlan } from "../../src/plan/mod.ts";
import { renderPlan } from "./_render.ts";

/** Text -> the plan htmcp builds (rendered by `renderPlan`). */
const PLANS: readonly (readonly [string, string])[] = [
  // plain commands and quoting (today's tokenizer rules)
  ["ls", `["ls"]`],
  ["ls -la", `["ls","-la"]`],
  ["  ls   -la  ", `["ls","-la"]`],
  ["ls\t-la", `["ls","-la"]`],
  [`grep "a b" file`, `["grep","a b","file"]`],
  [`grep 'a b' file`, `["grep","a b","file"]`],
  [`echo a\\ b`, `["echo","a b"]`],
  [`echo "a\\"b"`, `["echo","a\\"b"]`],
  [`echo "a\\\\b"`, `["echo","a\\\\b"]`],
  [`echo 'it'"'"'s'`, `["echo","it's"]`],
  [`echo a"b"'c'd`, `["echo","abcd"]`],
  [`echo ''`, `["echo",""]`],
  [`echo "" x`, `["echo","","x"]`],
  [`git show HEAD~1`, `["git","show","HEAD~1"]`],
  [`echo a#b`, `["echo","a#b"]`],
  [`echo héllo`, `["echo","héllo"]`],
  [`echo ]`, `["echo","]"]`],
  // quoted operators stay data
  [`grep 'a|b' f`, `["grep","a|b","f"]`],
  [`grep "a;b" f`, `["grep","a;b","f"]`],
  [`echo 'a > b < c & d'`, `["echo","a > b < c & d"]`],
  [`echo a\\|b`, `["echo","a|b"]`],
  [`echo \\; \\| \\&`, `["echo",";","|","&"]`],
  [`echo "a&&b" 'c||d'`, `["echo","a&&b","c||d"]`],
  [`echo \\>x`, `["echo",">x"]`],
  [`echo "2>&1"`, `["echo","2>&1"]`],
  // `$` and backtick are plain text inside single quotes
  [`grep 'foo$' file`, `["grep","foo$","file"]`],
  [`echo '$x'`, `["echo","$x"]`],
  [`echo '$(id)'`, `["echo","$(id)"]`],
  [`echo '\`id\`'`, `["echo","\`id\`"]`],
  [`awk '{print $1}' access.log`, `["awk","{print $1}","access.log"]`],
  [`awk -F: '{ print $1, $NF }' f`, `["awk","-F:","{ print $1, $NF }","f"]`],
  [`sed 's/$/;/' f`, `["sed","s/$/;/","f"]`],
  [`grep -E '^a.*b$' f`, `["grep","-E","^a.*b$","f"]`],
  // quoted glob characters are literal
  [
    `echo '*.txt' "?" '[x]' '{a,b}' '!' '#x' '~'`,
    `["echo","*.txt","?","[x]","{a,b}","!","#x","~"]`,
  ],
  [`find . -name '*.ts'`, `["find",".","-name","*.ts"]`],
  [`find . -name "*.ts"`, `["find",".","-name","*.ts"]`],
  [`ls \\*.txt`, `["ls","*.txt"]`],
  // globs
  ["ls *.ts", `["ls",g[0]"*.ts"]`],
  ["ls *", `["ls",g[0]"*"]`],
  ["ls src/*.ts", `["ls",g[4]"src/*.ts"]`],
  ["ls a?c", `["ls",g[1]"a?c"]`],
  ["ls [ab].txt", `["ls",g[0]"[ab].txt"]`],
  ["ls [!a].txt", `["ls",g[0]"[!a].txt"]`],
  ["ls */*.md", `["ls",g[0,2]"*/*.md"]`],
  [`ls 'a*'*`, `["ls",g[2]"a**"]`],
  [`ls "dir name"/*`, `["ls",g[9]"dir name/*"]`],
  ["cat *.txt | wc -l", `["cat",g[0]"*.txt"] | ["wc","-l"]`],
  // pipelines
  ["a | b", `["a"] | ["b"]`],
  ["a|b", `["a"] | ["b"]`],
  ["a | b | c", `["a"] | ["b"] | ["c"]`],
  [
    "grep -rn TODO src | sort | head -20",
    `["grep","-rn","TODO","src"] | ["sort"] | ["head","-20"]`,
  ],
  ["grep -rn x src | sort | head -3", `["grep","-rn","x","src"] | ["sort"] | ["head","-3"]`],
  ["yes | head -1", `["yes"] | ["head","-1"]`],
  [`cat f | grep 'a b'`, `["cat","f"] | ["grep","a b"]`],
  ["ls|wc", `["ls"] | ["wc"]`],
  // sequences
  ["a && b", `["a"] && ["b"]`],
  ["a&&b", `["a"] && ["b"]`],
  ["a || b", `["a"] || ["b"]`],
  ["a||b", `["a"] || ["b"]`],
  ["a ; b", `["a"] ; ["b"]`],
  ["a;b", `["a"] ; ["b"]`],
  ["a;", `["a"]`],
  ["a ; ", `["a"]`],
  ["a && b || c", `["a"] && ["b"] || ["c"]`],
  ["a | b && c | d", `["a"] | ["b"] && ["c"] | ["d"]`],
  ["seq 1 5 > out.txt && cat out.txt", `["seq","1","5"] 1>"out.txt" && ["cat","out.txt"]`],
  ["make; make test", `["make"] ; ["make","test"]`],
  ["true && false || echo no", `["true"] && ["false"] || ["echo","no"]`],
  // cd at the head
  ["cd app && ls", `cd "app" && ["ls"]`],
  ["cd app; make", `cd "app" ; ["make"]`],
  ["cd app && cd sub && ls", `cd "app" && cd "sub" && ["ls"]`],
  ["cd sub", `cd "sub"`],
  [`cd "my dir" && ls`, `cd "my dir" && ["ls"]`],
  ["cd .. && ls", `cd ".." && ["ls"]`],
  ["cd / && ls", `cd "/" && ["ls"]`],
  ["cd app && make > build.log 2>&1", `cd "app" && ["make"] 1>"build.log" 2>&1`],
  [`"cd" x`, `["cd","x"]`],
  ["echo cd", `["echo","cd"]`],
  // redirections
  ["ls > f", `["ls"] 1>"f"`],
  ["ls >f", `["ls"] 1>"f"`],
  ["ls>f", `["ls"] 1>"f"`],
  ["ls >> f", `["ls"] 1>>"f"`],
  ["ls >>f", `["ls"] 1>>"f"`],
  ["ls 1> f", `["ls"] 1>"f"`],
  ["ls 1>> f", `["ls"] 1>>"f"`],
  ["ls 2> err", `["ls"] 2>"err"`],
  ["ls 2>err", `["ls"] 2>"err"`],
  ["ls 2>> err", `["ls"] 2>>"err"`],
  ["ls 2>&1", `["ls"] 2>&1`],
  ["ls >&2", `["ls"] 1>&2`],
  ["ls 1>&2", `["ls"] 1>&2`],
  ["ls > /dev/null", `["ls"] 1>"/dev/null"`],
  ["ls 2>/dev/null", `["ls"] 2>"/dev/null"`],
  ["ls > out 2>&1", `["ls"] 1>"out" 2>&1`],
  ["ls 2>&1 > out", `["ls"] 2>&1 1>"out"`],
  ["sort < in.txt", `["sort"] 0<"in.txt"`.replace("0<", "<")],
  ["sort <in.txt", `["sort"] <"in.txt"`],
  ["sort<in.txt", `["sort"] <"in.txt"`],
  ["sort < in.txt > out.txt", `["sort"] <"in.txt" 1>"out.txt"`],
  ["> f ls", `["ls"] 1>"f"`],
  ["< in sort -r", `["sort","-r"] <"in"`],
  ["make > build.log 2>&1", `["make"] 1>"build.log" 2>&1`],
  [`ls > "out file"`, `["ls"] 1>"out file"`],
  ["ls a2>f", `["ls","a2"] 1>"f"`],
  [`ls "2">f`, `["ls","2"] 1>"f"`],
  ["ls 2 >f", `["ls","2"] 1>"f"`],
  ["ls 0<f", `["ls"] <"f"`],
  ["grep x 2>&1 | sort", `["grep","x"] 2>&1 | ["sort"]`],
  ["a 2>/dev/null | b > out", `["a"] 2>"/dev/null" | ["b"] 1>"out"`],
  ["ls >*.txt", `["ls"] 1>g[0]"*.txt"`],
  // environment-looking words that are not prefixes
  ["echo A=b", `["echo","A=b"]`],
  [`"A=b" x`, `["A=b","x"]`],
  ["make CC=gcc", `["make","CC=gcc"]`],
];

for (const [text, expected] of PLANS) {
  Deno.test(`parsePlan() reads ${JSON.stringify(text)} as ${expected}`, () => {
    const result = parsePlan(text);
    ok(result.ok, JSON.stringify(result));
    equal(renderPlan(result.plan), expected);
  });
}

/** Text -> the refusal code and a piece of its reason. */
const REFUSALS: readonly (readonly [string, "POLICY_DENIED" | "PARSE_ERROR", string])[] = [
  // expansion
  [`echo $HOME`, "POLICY_DENIED", `"$" outside quotes`],
  [`echo "$HOME"`, "POLICY_DENIED", `"$" inside double quotes`],
  [`echo "$x"`, "POLICY_DENIED", "inside double quotes"],
  [`echo $(id)`, "POLICY_DENIED", "substitution"],
  [`echo "\${x}"`, "POLICY_DENIED", "substitution"],
  [`echo \${x}`, "POLICY_DENIED", "substitution"],
  [`echo \`id\``, "POLICY_DENIED", "command substitution"],
  [`echo "\`id\`"`, "POLICY_DENIED", "inside double quotes"],
  [`echo $'\\x41'`, "POLICY_DENIED", `"$"`],
  [`echo $((1+1))`, "POLICY_DENIED", `"$"`],
  [`ls "a"$b`, "POLICY_DENIED", `"$"`],
  // background, subshells, groups, negation
  ["sleep 1 &", "POLICY_DENIED", "background"],
  ["sleep 1 & ls", "POLICY_DENIED", "background"],
  ["a &>f", "POLICY_DENIED", `"&>"`],
  ["a |& b", "POLICY_DENIED", `"|&"`],
  ["(ls)", "POLICY_DENIED", "subshell"],
  ["ls (x)", "POLICY_DENIED", "subshell"],
  ["{ ls; }", "POLICY_DENIED", "command group"],
  ["echo {a,b}", "POLICY_DENIED", "brace expansion"],
  ["! ls", "POLICY_DENIED", "negation"],
  ["echo !!", "POLICY_DENIED", "history"],
  // process substitution, here-docs, other redirections
  ["diff <(ls a) <(ls b)", "POLICY_DENIED", "process substitution"],
  ["tee >(cat)", "POLICY_DENIED", "process substitution"],
  ["cat <<EOF", "POLICY_DENIED", "here-document"],
  ["cat <<< word", "POLICY_DENIED", "here-document"],
  ["cat <> f", "POLICY_DENIED", `"<>"`],
  ["cat <&3", "POLICY_DENIED", `"<&"`],
  ["ls >| f", "POLICY_DENIED", `">|"`],
  ["ls 3> f", "POLICY_DENIED", "descriptor 3"],
  ["ls 9>f", "POLICY_DENIED", "descriptor 9"],
  ["ls 3< f", "POLICY_DENIED", "descriptor 3"],
  ["ls 2>&3", "POLICY_DENIED", "followed by 1 or 2"],
  ["ls >&f", "POLICY_DENIED", "followed by 1 or 2"],
  ["ls >&12", "POLICY_DENIED", "followed by 1 or 2"],
  ["ls 2>&2", "POLICY_DENIED", "at itself"],
  ["ls >&1", "POLICY_DENIED", "at itself"],
  ["case x in a) ;; esac", "POLICY_DENIED", "subshell"],
  ["a ;; b", "POLICY_DENIED", `";;"`],
  // environment prefixes
  ["VAR=x cmd", "POLICY_DENIED", "environment assignment"],
  ["A=1 B=2 ls", "POLICY_DENIED", "environment assignment"],
  ["ls | X=1 cat", "POLICY_DENIED", "environment assignment"],
  ["ls && _x=1 cat", "POLICY_DENIED", "environment assignment"],
  // comments, tilde
  ["ls #x", "POLICY_DENIED", "comment"],
  ["# ls", "POLICY_DENIED", "comment"],
  ["cat ~/.ssh/id_rsa", "POLICY_DENIED", "home folder"],
  ["ls --dir=~/x", "POLICY_DENIED", "home folder"],
  ["ls ~", "POLICY_DENIED", "home folder"],
  // control and format characters anywhere
  ["ls\nid", "POLICY_DENIED", "line break"],
  ["ls\rid", "POLICY_DENIED", "line break"],
  ["ls 'a\nb'", "POLICY_DENIED", "line break"],
  ["ls\u2028id", "POLICY_DENIED", "line break"],
  ["ls\u0000", "POLICY_DENIED", "U+0000"],
  ["ls\u001b[31m", "POLICY_DENIED", "U+001B"],
  ["ls\u00a0-la", "POLICY_DENIED", "U+00A0"],
  ["ls\u202e", "POLICY_DENIED", "U+202E"],
  ["ls\u200b", "POLICY_DENIED", "U+200B"],
  // cd misuse
  ["ls && cd x", "POLICY_DENIED", "not follow another command"],
  ["cd a && cd b", "POLICY_DENIED", `ends with "cd"`],
  ["ls && cd x && ls", "POLICY_DENIED", "not follow another command"],
  ["make || cd x && ls", "POLICY_DENIED", "not follow another command"],
  ["cd x | ls", "POLICY_DENIED", "pipeline"],
  ["ls | cd x", "POLICY_DENIED", "pipeline"],
  ["cd", "POLICY_DENIED", "exactly one folder"],
  ["cd a b && ls", "POLICY_DENIED", "exactly one folder"],
  ["cd - && ls", "POLICY_DENIED", `"cd -"`],
  ["cd x > f && ls", "POLICY_DENIED", "exactly one folder"],
  ["cd * && ls", "POLICY_DENIED", "not a pattern"],
  ["cd x || ls", "POLICY_DENIED", `"cd DIR ||"`],
  // structure
  ["", "PARSE_ERROR", "empty"],
  ["   ", "PARSE_ERROR", "empty"],
  ["| ls", "PARSE_ERROR", "no command before"],
  ["ls |", "PARSE_ERROR", "no command after"],
  ["ls | | wc", "PARSE_ERROR", "no command before"],
  ["&& ls", "PARSE_ERROR", "no command before"],
  ["ls &&", "PARSE_ERROR", "no command after"],
  ["ls ||", "PARSE_ERROR", "no command after"],
  ["ls && && wc", "PARSE_ERROR", "no command before"],
  ["; ls", "PARSE_ERROR", "no command before"],
  ["ls ;;", "POLICY_DENIED", `";;"`],
  ["ls >", "PARSE_ERROR", "not followed by a file name"],
  ["ls > | wc", "PARSE_ERROR", "not followed by a file name"],
  ["ls 2>", "PARSE_ERROR", "not followed by a file name"],
  ["ls <", "PARSE_ERROR", "not followed by a file name"],
  ["> f", "PARSE_ERROR", "no command"],
  ["2>&1", "PARSE_ERROR", "no command"],
  [`echo 'unterminated`, "PARSE_ERROR", "unbalanced '"],
  [`echo "unterminated`, "PARSE_ERROR", `unbalanced "`],
  [`echo "a'`, "PARSE_ERROR", "unbalanced"],
  [`echo trailing\\`, "PARSE_ERROR", "backslash"],
  // bounds
  [Array.from({ length: 17 }, () => "true").join(" | "), "POLICY_DENIED", "more than 16 commands"],
  [Array.from({ length: 17 }, () => "true").join(" && "), "POLICY_DENIED", "more than 16 commands"],
  ["ls" + " > f".repeat(33), "POLICY_DENIED", "more than 32 redirections"],
];

for (const [text, code, reason] of REFUSALS) {
  Deno.test(`parsePlan() refuses ${JSON.stringify(text).slice(0, 60)} with ${code}`, () => {
    const result = parsePlan(text);
    ok(!result.ok, `expected a refusal, got ${result.ok ? renderPlan(result.plan) : ""}`);
    equal(result.code, code, result.reason);
    ok(result.reason.includes(reason), `reason ${JSON.stringify(result.reason)} lacks ${reason}`);
  });
}

Deno.test("parsePlan() covers at least 150 table cases", () => {
  ok(PLANS.length + REFUSALS.length >= 150, String(PLANS.length + REFUSALS.length));
});
