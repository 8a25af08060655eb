//! Secrets kept out of everything a run writes: results.json (its command line, its
//! variables), run.log, the report pages `blobrace site` publishes. One redaction for
//! every place a URL, an argument or a variable is recorded or said.
//!
//! A secret reaches blobrace in three forms, all accepted by the drivers it hands them
//! to: a URL's user info (`postgres://user:secret@host/db`), a URL's query parameter
//! (`?password=…`, `?sslpassword=…`, which libpq and sqlx take), and a variable or flag
//! named for one (`S3_SECRET_KEY`, `--x-password v`). Each is replaced; what is left
//! still says which server, user and database were used.

/// What a secret's value is replaced with.
pub const REDACTED: &str = "<redacted>";

/// Whether a query parameter or a `key=value` field named `name` holds a secret:
/// any password, secret, token, key or credential (`password`, `sslpassword`, `pwd`,
/// `auth_token`, `access_key`, `secret_key`, `apikey`, ...).
fn secret_field(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "pass",
        "pwd",
        "secret",
        "token",
        "key",
        "credential",
        "auth",
        "signature",
    ]
    .iter()
    .any(|word| name.contains(word))
}

/// Whether a variable or a flag named `name` holds a secret. Its words (split at `_`,
/// `-` or `.`) are read, not its letters: `BLOBRACE_KEY` (the key's layout) is not
/// one, `S3_SECRET_KEY`, `AWS_ACCESS_KEY_ID`, `--db-password` and `API_KEY` are.
pub fn secret_name(name: &str) -> bool {
    let words: Vec<String> = name
        .split(['_', '-', '.'])
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    let has = |w: &str| words.iter().any(|word| word == w);
    words.iter().any(|w| {
        w.contains("password")
            || w.contains("passwd")
            || w.contains("secret")
            || w.contains("token")
            || w.contains("credential")
            || w == "pwd"
            || w == "pass"
            || w == "apikey"
    }) || (has("key")
        && ["access", "api", "private", "auth", "signing"]
            .iter()
            .any(|w| has(w)))
}

/// A URL with its password and its secret query parameters replaced:
/// `scheme://user:secret@host/db?sslmode=require&password=p` →
/// `scheme://user@host/db?sslmode=require&password=<redacted>`. Text that is not a URL
/// is returned as it is.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    // The user info ends at the last '@' before the query: a password may hold '@'
    // or '/' unencoded, and libpq and sqlx still take it.
    let query_at = rest.find('?').unwrap_or(rest.len());
    let (user, rest) = match rest[..query_at].rfind('@') {
        Some(at) => {
            let user = rest[..at].split(':').next().unwrap_or("");
            (format!("{user}@"), &rest[at + 1..])
        }
        None => (String::new(), rest),
    };
    format!("{scheme}://{user}{}", redact_query(rest))
}

/// `host/db?a=1&password=p#t` → `host/db?a=1&password=<redacted>#t`.
fn redact_query(rest: &str) -> String {
    let Some((path, query)) = rest.split_once('?') else {
        return rest.to_string();
    };
    let (query, fragment) = match query.split_once('#') {
        Some((q, f)) => (q, Some(f)),
        None => (query, None),
    };
    let fields: Vec<String> = query
        .split('&')
        .map(|field| match field.split_once('=') {
            Some((name, _)) if secret_field(name) => format!("{name}={REDACTED}"),
            _ => field.to_string(),
        })
        .collect();
    let mut out = format!("{path}?{}", fields.join("&"));
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// A variable's value as it may be recorded: whole where its name says it is a secret,
/// else with any URL in it redacted.
pub fn redact_variable(name: &str, value: &str) -> String {
    if secret_name(name) {
        REDACTED.into()
    } else {
        redact_text(value)
    }
}

/// Free text (an argument, a line, an error) with every URL in it redacted, and any
/// `name=value` whose name is a secret's (a libpq `password=…` field, a flag
/// `--x-password=…`).
pub fn redact_text(text: &str) -> String {
    text.split(' ')
        .map(|word| {
            if word.contains("://") {
                redact_url(word)
            } else {
                match word.split_once('=') {
                    Some((name, _)) if secret_name(name.trim_start_matches('-')) => {
                        format!("{name}={REDACTED}")
                    }
                    _ => word.to_string(),
                }
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A command line as it may be recorded: each argument redacted, and the argument
/// after a flag named for a secret (`--x-password p`) replaced whole.
pub fn redact_command(args: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut after_secret_flag = false;
    args.into_iter()
        .map(|arg| {
            let shown = if after_secret_flag {
                REDACTED.to_string()
            } else {
                redact_text(&arg)
            };
            after_secret_flag = arg.starts_with('-')
                && !arg.contains('=')
                && secret_name(arg.trim_start_matches('-'));
            shown
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_info_passwords_go_and_the_server_stays() {
        assert_eq!(
            redact_url("postgres://u:secret@h:1/db"),
            "postgres://u@h:1/db"
        );
        assert_eq!(redact_url("mysql://root:p@ss@h:2"), "mysql://root@h:2");
        assert_eq!(redact_url("mysql://root:p/s@h:2/db"), "mysql://root@h:2/db");
        assert_eq!(redact_url("postgres://h/db"), "postgres://h/db");
        assert_eq!(redact_url("not a url"), "not a url");
    }

    #[test]
    fn secret_query_parameters_go_and_the_others_stay() {
        assert_eq!(
            redact_url("postgres://u@h/db?sslmode=disable&password=hunter2"),
            "postgres://u@h/db?sslmode=disable&password=<redacted>"
        );
        let url = redact_url(
            "postgres://h/db?PASSWORD=a&sslpassword=b&auth_token=c&apikey=d&user=u#blobs",
        );
        for secret in ["=a&", "=b&", "=c&", "=d&"] {
            assert!(!url.contains(secret), "{url}");
        }
        assert!(url.ends_with("user=u#blobs"), "{url}");
        // An '@' in a query parameter is not user info.
        assert_eq!(
            redact_url("postgres://h/db?password=a@b"),
            "postgres://h/db?password=<redacted>"
        );
    }

    #[test]
    fn variables_named_for_secrets_go_whole_and_the_layout_key_stays() {
        for name in [
            "S3_SECRET_KEY",
            "AWS_ACCESS_KEY_ID",
            "APP_DB_PASSWORD",
            "PGPASSWORD",
            "API_KEY",
            "GITHUB_TOKEN",
        ] {
            assert_eq!(redact_variable(name, "abc"), REDACTED, "{name}");
        }
        assert_eq!(redact_variable("BLOBRACE_KEY", "uuidv4"), "uuidv4");
        assert_eq!(
            redact_variable("BLOBRACE_SIZES", "1KiB,64KiB"),
            "1KiB,64KiB"
        );
        assert_eq!(
            redact_variable("BLOBRACE_POSTGRES_URL", "postgres://u:p@h/d?password=q"),
            "postgres://u@h/d?password=<redacted>"
        );
    }

    #[test]
    fn a_command_line_keeps_its_flags_and_loses_its_secrets() {
        let args = [
            "blobrace",
            "measure",
            "--postgres-url=postgres://u:a1@h/db?password=a2",
            "--mysql-url",
            "mysql://r:a3@h",
            "--db-password",
            "a4",
            "--token=a5",
            "host=h password=a6",
            "--sizes",
            "1KiB",
        ];
        let shown = redact_command(args.iter().map(|a| a.to_string())).join(" ");
        for secret in ["a1", "a2", "a3", "a4", "a5", "a6"] {
            assert!(!shown.contains(secret), "{secret}: {shown}");
        }
        assert!(shown.contains("--sizes 1KiB") && shown.contains("--mysql-url mysql://r@h"));
    }
}
