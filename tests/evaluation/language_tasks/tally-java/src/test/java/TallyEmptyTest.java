import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

public class TallyEmptyTest {

    @Test
    public void anEmptyTallyHasNoTop() {
        assertThat(new Tally().top()).isNull();
    }
}
