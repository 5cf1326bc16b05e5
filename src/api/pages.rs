//! Listings a page at a time. Each asks the store for one row more than the page holds: the
//! extra row, never shown, says whether another page follows, and the page's last row makes
//! the cursor for it.

use super::ApiError;

/// The page size a listing was asked for (`limit`, else `default`), which must be from 1 to
/// `max`.
pub(super) fn page_size(limit: Option<i64>, default: i64, max: i64) -> Result<i64, ApiError> {
    let limit = limit.unwrap_or(default);
    match (1..=max).contains(&limit) {
        true => Ok(limit),
        false => Err(ApiError::InvalidQuery(format!(
            "limit must be from 1 to {max}"
        ))),
    }
}

/// How many rows to read for a page of `limit`: one more.
pub(super) fn rows_for(limit: i64) -> i64 {
    limit + 1
}

/// `rows` (read with [`rows_for`]) cut to the page, and the cursor of the next page, made from
/// the page's last row by `cursor`, when one follows.
pub(super) fn page_of<T, C>(
    mut rows: Vec<T>,
    limit: i64,
    cursor: impl FnOnce(&T) -> C,
) -> (Vec<T>, Option<C>) {
    let more = rows.len() as i64 > limit;
    rows.truncate(usize::try_from(limit).unwrap_or(0));
    let next = rows.last().filter(|_| more).map(cursor);
    (rows, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_says_whether_another_follows() {
        let read = |n: i64| (1..=n).collect::<Vec<i64>>();
        assert_eq!(
            page_of(read(rows_for(3)), 3, |r| *r),
            (vec![1, 2, 3], Some(3))
        );
        assert_eq!(page_of(read(3), 3, |r| *r), (vec![1, 2, 3], None));
        assert_eq!(page_of(read(0), 3, |r| *r), (vec![], None));
        assert!(page_size(Some(0), 20, 100).is_err());
        assert!(page_size(Some(101), 20, 100).is_err());
        assert_eq!(page_size(None, 20, 100).unwrap(), 20);
    }
}
