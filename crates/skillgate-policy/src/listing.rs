//! Listing.
