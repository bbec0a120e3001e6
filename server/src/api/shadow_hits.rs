//! `GET /api/shadow-hits`: the calls shadow gates would have stopped (they ran unasked), newest
//! first: yours, or everyone's for an admin. The queue's Decided tab lists them. An admin also sees
//! the draft's (`COUNTERSIGN_AGENTS_DRAFT`): calls the draft configuration would have treated
//! otherwise, `draft: true`, their gate `draft:…`; `?draft=true` lists only those, `?draft=false`
//! only the shadow gates'.

use crate::error::{ApiError, ReadErrors};
use axum::{Json, extract::State};
use domain::wire::ShadowHit;
use engine::reads::Which;
use serde::Deserialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::extract::ApiQuery;
use crate::{auth::CurrentUser, state::AppState};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    /// At most this many (default 100).
    #[param(minimum = 1, maximum = 500)]
    limit: Option<i64>,
    /// `true`: only the draft's hits (admins only); `false`: only the shadow gates'. Default: the
    /// shadow gates', and for an admin the draft's too.
    draft: Option<bool>,
}

#[utoipa::path(
    get,
    path = "/api/shadow-hits",
    operation_id = "listShadowHits",
    tag = "approvals",
    summary = "Calls a shadow gate would have stopped (they ran unasked), and for admins those the draft policy would have treated otherwise, newest first",
    params(ListQuery),
    responses(
        (status = 200, description = "OK", body = Vec<ShadowHit>),
        ReadErrors,
    ),
)]
async fn list(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<Json<Vec<ShadowHit>>, ApiError> {
    let limit = query.limit.unwrap_or(100);
    if !(1..=500).contains(&limit) {
        return Err(ApiError::invalid("limit", "limit must be from 1 to 500"));
    }
    // The draft is the admins' work in progress: its hits are theirs to read.
    let admin = user.user.is_admin();
    let which = match (query.draft, admin) {
        (Some(true), false) => return Err(ApiError::Forbidden("only admins may read the draft policy's shadow hits".into())),
        (Some(true), true) => Which::Draft,
        (Some(false), _) | (None, false) => Which::Gates,
        (None, true) => Which::All,
    };
    Ok(Json(state.reads.shadow_hits(user.owner_filter(), which, limit).await?))
}
