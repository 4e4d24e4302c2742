public enum Ballot {
    YES,
    NO,
    ABSTAIN
}
