mod socket;
