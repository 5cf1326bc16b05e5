//! A player's e-mail address, and getting an account back by it.
//!
//! - An address counts once its player follows the link mailed to it; a new one replaces the
//!   old only then, and the old one is told.
//! - A password reset is asked for with a name or an address and answered the same whether or
//!   not there is such an account (the caller answers before looking: see the API). Its link
//!   works once, for [`RESET_LIFETIME`], and ends every session of the account.
//! - Each link is kept as a hash, and mailed by the outbox in the transaction that keeps it.

use std::time::Duration;

use super::{AccountError, Accounts, SignedIn};
use crate::domain::credentials::hash_secret;
use crate::domain::ids::{random_hex, PlayerId};
use crate::domain::letters::{letter, Link};
use crate::domain::notices::Letter;
use crate::domain::passwords;
use crate::domain::public_url::PublicUrl;
use crate::domain::time::Timestamp;
use crate::store::{EmailRecord, LinkPurpose, NewLink, StoreError};

/// How long a verification link works.
pub const VERIFY_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);
/// How long a reset link works.
pub const RESET_LIFETIME: Duration = Duration::from_secs(30 * 60);
/// The longest address taken (RFC 5321's limit on a path).
pub const MAX_ADDRESS: usize = 254;

/// Where links point and whether mail goes at all.
#[derive(Debug, Clone, Default)]
pub struct AccountMail {
    /// No SMTP server: no mail, and no address to give.
    pub enabled: bool,
    pub public_url: PublicUrl,
}

/// A player's address as they see it.
pub struct EmailView {
    pub enabled: bool,
    pub verified: Option<EmailRecord>,
    /// The address whose link was mailed last, while it works.
    pub pending: Option<String>,
}

/// `address`, checked as a mailbox one can send to (`name@domain`, no display name).
pub fn parse_address(address: &str) -> Result<String, AccountError> {
    let address = address.trim();
    if address.len() > MAX_ADDRESS {
        return Err(AccountError::InvalidEmail(format!(
            "an address has at most {MAX_ADDRESS} characters"
        )));
    }
    match address.parse::<lettre::Address>() {
        Ok(parsed) => Ok(parsed.to_string()),
        Err(err) => Err(AccountError::InvalidEmail(format!(
            "`{address}` is not an e-mail address: {err}"
        ))),
    }
}

impl Accounts {
    /// The public address links start with, if mail goes at all.
    fn mail_on(&self) -> Result<String, AccountError> {
        match self.mail.enabled {
            true => Ok(self.mail.public_url.get()),
            false => Err(AccountError::MailDisabled),
        }
    }

    /// Whether this server sends mail (it has an SMTP server).
    pub fn sends_mail(&self) -> bool {
        self.mail.enabled
    }

    /// The caller's address, the one waiting for its link, and whether mail goes at all.
    pub async fn email(&self, me: &SignedIn) -> Result<EmailView, AccountError> {
        let (verified, pending) = self.store.email_of(&me.player.id).await?;
        Ok(EmailView {
            enabled: self.mail.enabled,
            verified,
            pending,
        })
    }

    /// Mails a link that makes `address` the caller's once followed; the address asked for
    /// before stops waiting.
    pub async fn set_email(&self, me: &SignedIn, address: &str) -> Result<String, AccountError> {
        let public_url = self.mail_on()?;
        let address = parse_address(address)?;
        let token = random_hex(32);
        let url = format!("{}/#/verify-email?token={token}", public_url);
        let letter = letter(
            &public_url,
            "Confirm your e-mail address",
            &[format!(
                "Someone, most likely you, asked for this address to be the one of the player \
                 “{}”. Follow the link within a day to confirm it; until then it is not used.",
                me.player.username
            )],
            &[Link {
                label: "Confirm this address",
                url: &url,
            }],
            "If it was not you, ignore this mail: nothing changes.",
        );
        self.mail_link(
            &me.player.id,
            LinkPurpose::Verify,
            &address,
            &token,
            VERIFY_LIFETIME,
            letter,
        )
        .await?;
        Ok(address)
    }

    /// The caller no longer has an address.
    pub async fn remove_email(&self, me: &SignedIn) -> Result<(), AccountError> {
        Ok(self.store.remove_email(&me.player.id).await?)
    }

    /// Follows a verification link: the address becomes its player's. The address it replaces
    /// is told.
    pub async fn verify_email(&self, token: &str) -> Result<(PlayerId, String), AccountError> {
        let public_url = self.mail_on()?;
        let hash = hash_secret(token);
        let (player, address) = self
            .store
            .email_token(&hash, LinkPurpose::Verify)
            .await?
            .ok_or(AccountError::InvalidLink)?;
        let account = self.store.account(&player).await?;
        let name = account.map(|a| a.username).unwrap_or_default();
        let old_letter = letter(
            &public_url,
            "Your e-mail address was changed",
            &[format!(
                "The address of the player “{name}” is now {address}. Mail about the account \
                 goes there from now on."
            )],
            &[],
            "You get this mail because this was the account's address.",
        );
        match self.store.verify_email(&hash, old_letter).await {
            Ok(Some(verified)) => Ok(verified),
            Ok(None) => Err(AccountError::InvalidLink),
            Err(StoreError::AddressTaken) => Err(AccountError::EmailTaken),
            Err(err) => Err(err.into()),
        }
    }

    /// Mails a reset link to the account named `name_or_address`, or whose verified address it
    /// is, if there is one: whether there was.
    pub async fn request_reset(&self, name_or_address: &str) -> Result<bool, AccountError> {
        let public_url = self.mail_on()?;
        let Some((player, address)) = self.store.reset_account(name_or_address.trim()).await?
        else {
            return Ok(false);
        };
        let token = random_hex(32);
        let url = format!("{}/#/reset-password?token={token}", public_url);
        let letter = letter(
            &public_url,
            "Reset your password",
            &[format!(
                "Someone, most likely you, asked to reset the password of the player “{}”. \
                 Follow the link within 30 minutes to choose a new one. It works once, and \
                 signs the account out everywhere.",
                player.username
            )],
            &[Link {
                label: "Choose a new password",
                url: &url,
            }],
            "If it was not you, ignore this mail: the password stays as it is.",
        );
        self.mail_link(
            &player.id,
            LinkPurpose::Reset,
            &address,
            &token,
            RESET_LIFETIME,
            letter,
        )
        .await?;
        Ok(true)
    }

    /// Follows a reset link: the password becomes `password` and every session of the account
    /// ends (and its streams close). The account's address is told.
    pub async fn reset_password(&self, token: &str, password: &str) -> Result<(), AccountError> {
        let public_url = self.mail_on()?;
        passwords::check(password).map_err(AccountError::InvalidPassword)?;
        let hash_of_link = hash_secret(token);
        if (self
            .store
            .email_token(&hash_of_link, LinkPurpose::Reset)
            .await?)
            .is_none()
        {
            return Err(AccountError::InvalidLink);
        }
        let chosen = password.to_owned();
        let hash = self.hashing.run(move || passwords::hash(&chosen)).await?;
        let told = password_changed(&public_url, "by a reset link");
        match self
            .store
            .reset_password(&hash_of_link, &hash, told)
            .await?
        {
            Some((_, ended)) => {
                self.sessions_ended(ended);
                Ok(())
            }
            None => Err(AccountError::InvalidLink),
        }
    }

    async fn mail_link(
        &self,
        player: &PlayerId,
        purpose: LinkPurpose,
        address: &str,
        token: &str,
        lifetime: Duration,
        letter: Letter,
    ) -> Result<(), AccountError> {
        let now = Timestamp::now();
        let link = NewLink {
            player_id: player.clone(),
            purpose,
            address: address.to_owned(),
            token_hash: hash_secret(token),
            created_at: now,
            expires_at: now.after(lifetime),
            letter,
        };
        Ok(self.store.mail_link(link).await?)
    }

    /// The mail that tells a player's address their password changed (`how`).
    pub(super) fn password_changed_letter(&self, how: &str) -> Letter {
        password_changed(&self.mail.public_url.get(), how)
    }
}

fn password_changed(public_url: &str, how: &str) -> Letter {
    letter(
        public_url,
        "Your password was changed",
        &[format!(
            "The password of your account was set {how}, and every other device was signed \
             out. If it was not you, reset it from the sign-in page (\"Forgot your password?\")."
        )],
        &[Link {
            label: "Sign in",
            url: public_url,
        }],
        "You get this mail because this is the account's address.",
    )
}
