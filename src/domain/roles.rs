//! Roles a player may hold beyond playing, and who may publish games.

use std::fmt;

/// What a role lets a player do. A player holds any number of them; most hold none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Role {
    /// Moderates: the `/admin/` routes (suspend, rename, unpublish, close, the audit log), and
    /// publishing whatever `--uploads` says.
    Admin,
    /// Publishes games when `--uploads authors` restricts publishing.
    Author,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Author => "author",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Role::Admin, Role::Author]
            .into_iter()
            .find(|role| role.as_str() == text)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who may publish a game (`--uploads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum UploadPolicy {
    /// Any signed-up player.
    #[default]
    Anyone,
    /// Players with the `author` role, and admins.
    Authors,
    /// Admins only.
    Admins,
}

impl UploadPolicy {
    /// Whether a player holding `roles` may publish.
    pub fn allows(self, roles: &[Role]) -> bool {
        match self {
            UploadPolicy::Anyone => true,
            UploadPolicy::Authors => roles
                .iter()
                .any(|r| matches!(r, Role::Admin | Role::Author)),
            UploadPolicy::Admins => roles.contains(&Role::Admin),
        }
    }

    /// Who may publish, in words, for a refusal.
    pub fn who(self) -> &'static str {
        match self {
            UploadPolicy::Anyone => "any player",
            UploadPolicy::Authors => "authors and admins",
            UploadPolicy::Admins => "admins",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_policy_admits_whom_it_names() {
        let (none, author, admin) = (&[][..], &[Role::Author][..], &[Role::Admin][..]);
        let admitted = |policy: UploadPolicy| {
            [none, author, admin]
                .map(|roles| policy.allows(roles))
                .to_vec()
        };
        assert_eq!(admitted(UploadPolicy::Anyone), [true, true, true]);
        assert_eq!(admitted(UploadPolicy::Authors), [false, true, true]);
        assert_eq!(admitted(UploadPolicy::Admins), [false, false, true]);
        assert_eq!(Role::parse("author"), Some(Role::Author));
        assert_eq!(Role::parse("owner"), None);
    }
}
